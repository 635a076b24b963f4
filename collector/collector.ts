/**
 * The collector: supervises the tracer (restarts it with backoff), feeds its
 * lines through the parser and the call assembler, and publishes call events
 * to subscribers (the store, the live tail) in small batches. Knows nothing
 * of HTTP or SQL.
 *
 * Two tracers run at once: the main one, in the capture mode asked for, and
 * a sched-only standby (execs, forks, exits), so that when either dies the
 * other still sees every call start and end while it is restarted. Their
 * records meet in one pipeline (record-pipeline.ts): each event once, one
 * call assembler.
 *
 * Switching the capture mode starts a new main tracer before the old one
 * stops: calls that start from then on take their payloads from the new one,
 * the old one keeps supplying the calls it already had until they end, so
 * no call is lost, duplicated or re-parented.
 */

import { getPriority, setPriority } from 'node:os';
import type { Logger } from 'pino';
import { createTopic } from '../lib/index.js';
import { hostNetnsInode, netnsInodeOf } from './changes/index.js';
import type { Redactor } from './redact/redact-events.js';
import { cniProcessPids, describeProcess, isProcessAlive, processUsage } from './tracer/proc-info.js';
import { MonoToEpoch } from './tracer/wall-clock.js';
import { TRACER_NICE, type TracerExit, type TracerSettings } from './tracer/tracer-process.js';
import type { CaptureMode, PayloadPath } from '../bpf/index.js';
import { GapTracker } from './tracer/gap-tracker.js';
import { isOwnCanary, runCanary } from './tracer/canary.js';
import { defaultPayloadPath, describeExit, needsPayloadCheck, recordPayloadVerdict, TracerRun, TracerStartError } from './tracer/tracer-run.js';
import { monotonicNowUs, RecordPipeline } from './record-pipeline.js';
import type { CallListener, CollectorEvent, LostRecordsCause, TracerEvent, TracerEventListener, TracerGap } from './types.js';

export { TracerStartError } from './tracer/tracer-run.js';

export interface CollectorOptions {
  readonly tracer: TracerSettings;
  readonly logger: Logger;
  readonly finalizeGraceMs?: number;
  readonly maxStreamBytes?: number;
  /** How often events are handed to subscribers (and grace periods checked). */
  readonly flushIntervalMs?: number;
  /** How often running calls are checked against /proc, for exits the tracer never reported. */
  readonly livenessIntervalMs?: number;
  /** How long bpftrace may take to compile, load and prove it sees execs. */
  readonly readyTimeoutMs?: number;
  /** After a mode switch, how long the old tracer may keep following its calls. */
  readonly handoffTimeoutMs?: number;
  /** Replaces secrets in payloads before any subscriber sees a call; none when absent. */
  readonly redactor?: Redactor;
  /** Runs the sched-only standby tracer beside the main one (default true). */
  readonly standby?: boolean;
}

/** The sched-only tracer that covers the main one's restarts (and the main one its own). */
export interface StandbyStatus {
  readonly running: boolean;
  readonly ready: boolean;
  readonly pid: number | null;
  readonly restarts: number;
  /** Its resident memory now; null while it does not run. */
  readonly rssBytes: number | null;
  /** CPU time it used since it started (user + system). */
  readonly cpuSeconds: number | null;
  readonly lastError: string | null;
}

export interface TracerStatus {
  readonly running: boolean;
  /** The tracer has seen the collector's own probe exec: calls are being recorded. */
  readonly ready: boolean;
  readonly mode: CaptureMode;
  /**
   * How full mode takes payloads: `syscall-exit` (the bytes really moved,
   * one probe), or `syscall-entry` (the fallback when the start-up check
   * finds the exit probe misreading); null in light mode or with no tracer.
   */
  readonly payloadPath: PayloadPath | null;
  readonly pid: number | null;
  readonly restarts: number;
  readonly lostEvents: number;
  readonly malformedLines: number;
  readonly lastRecordAt: string | null;
  readonly startedAt: string | null;
  readonly lastError: string | null;
  /** A previous tracer still finishing the calls it had before a mode switch. */
  readonly handoffInProgress: boolean;
  /** Times no tracer recorded (bpftrace went away and was restarted), the current one included. */
  readonly gaps: number;
  /** Seconds without a recording tracer over all gaps, the current one up to now. */
  readonly gapSeconds: number;
  /** The current gap (endedAt null), else the last one; null when there was none. */
  readonly lastGap: GapStatus | null;
  /**
   * How far (ms of kernel time) the tracer's output must have moved past a
   * record before it goes on: the wait for records of other CPUs that may
   * still come (see collector/tracer/reorder-window.ts). Follows arrivalLagMs; 0
   * while no tracer runs.
   */
  readonly reorderWindowMs: number;
  /** The largest delay, over the last seconds, between a record's kernel timestamp and its arrival here (ms). */
  readonly arrivalLagMs: number;
  /** The standby tracer; null when the daemon runs none. */
  readonly standby: StandbyStatus | null;
}

export interface GapStatus {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly reason: string;
  readonly incompleteCalls: number;
}

export interface CollectorStats {
  readonly openCalls: number;
  /** When the oldest call still running (started, no exit seen) started, µs since the epoch; null when none is. */
  readonly oldestRunningStartUs: number | null;
  readonly callsStarted: number;
  readonly callsFinished: number;
  readonly records: number;
  readonly orphanChunks: number;
  /** Calls published marked lostRecords, by why (the first cause each). */
  readonly callsMarked: Readonly<Record<LostRecordsCause, number>>;
}

export interface Collector {
  subscribe(listener: CallListener): () => void;
  /** Follows the tracer itself (its gaps); returns the function that stops following. */
  subscribeTracer(listener: TracerEventListener): () => void;
  /** Starts bpftrace and resolves once it records; rejects with bpftrace's own words if it cannot. */
  start(): Promise<void>;
  /** Switches capture mode without losing calls in flight; resolves when the new tracer records. */
  setMode(mode: CaptureMode): Promise<void>;
  /** Stops the tracer; calls still running are published as incomplete. */
  stop(): Promise<void>;
  /** SIGKILLs every bpftrace at once, synchronously: for exit paths that cannot wait (process.exit, a crash). */
  killNow(): void;
  status(): TracerStatus;
  stats(): CollectorStats;
}

const RESTART_BACKOFF_MS = [250, 500, 1000, 2000];
/**
 * How far (kernel µs) the records handed on must have passed the moment a
 * plugin was found gone from /proc before its exit is taken to be lost: one
 * CPU's buffer can be read seconds after another's under load, and its exit
 * with it (a busy node had calls marked incomplete whose exit came late).
 */
const GONE_PAST_US = 5_000_000;
/** The sched-only standby prints execs, forks and exits only: a fraction of a full-mode tracer's output. */
const STANDBY_PERF_BUFFER_PAGES = 1024;
const HEALTHY_AFTER_MS = 30_000;
/** On stop, how long bpftrace may take to hand over what it recorded before the stop (out of the daemon's 5 s). */
const STOP_DRAIN_MS = 1_000;
/** After draining a retiring tracer, how long (beyond the reorder window) the pipeline gets to pass on what it printed. */
const RETIRE_RECHECK_MS = 100;

export function createCollector(opts: CollectorOptions): Collector {
  const log = opts.logger;
  const listeners = createTopic<CallListener>((err) => log.error({ err }, 'a call subscriber failed; its events are dropped'));
  const tracerListeners = createTopic<TracerEventListener>((err) => log.error({ err }, 'a tracer event subscriber failed'));
  const gaps = new GapTracker();
  const wallClock = new MonoToEpoch(undefined, {
    onStep: (stepUs) => log.warn({ stepMs: Math.round(stepUs / 1000) }, 'the wall clock stepped; calls recorded from now on are dated by the new time'),
  });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  const withStandby = opts.standby ?? true;
  let settings = opts.tracer;
  let pending: CollectorEvent[] = [];
  let nextRunId = 1;
  let main: TracerRun | null = null;
  let standby: TracerRun | null = null;
  /**
   * Main tracers before a mode switch, each supplying the calls that started before its `cutoverEpochUs` until
   * they are published. Several when switches come faster than calls end: stopping one early would lose the
   * last bytes of its calls.
   */
  interface Retiring {
    readonly run: TracerRun;
    readonly cutoverEpochUs: number;
    readonly deadline: number;
    /** Being drained before it stops (and before it is checked once more). */
    draining: boolean;
  }
  let retiring: Retiring[] = [];
  let stopping = false;
  /** Runs still compiling or attaching: a stop must end them too. */
  const starting = new Set<TracerRun>();
  const failures = { main: 0, standby: 0 };
  let restartCount = 0;
  let standbyRestarts = 0;
  let lastError: string | null = null;
  let standbyError: string | null = null;
  let timers: NodeJS.Timeout[] = [];
  // Totals of runs that have ended, so counters do not go back on a restart.
  const past = { lostEvents: 0, malformedLines: 0 };

  let deliveryScheduled = false;
  const deliver = () => {
    deliveryScheduled = false;
    if (pending.length === 0) return;
    // Redacted here, once per event, so the store and the live tail get the same bytes and neither the raw ones.
    const batch = opts.redactor ? opts.redactor.callEvents(pending) : pending;
    pending = [];
    listeners.publish((l) => l.onEvents(batch));
  };
  const emit = (events: readonly CollectorEvent[]) => {
    for (const ev of events) pending.push(ev);
    // Deliver right after the current I/O callback instead of at the next publish tick: events of
    // one chunk of tracer output still go out as one batch, and the live tail gets them ~12 ms sooner.
    if (pending.length > 0 && !deliveryScheduled) {
      deliveryScheduled = true;
      setImmediate(deliver);
    }
  };

  const pipeline = new RecordPipeline(
    {
      monoToEpochUs: (mono) => wallClock.toEpochUs(mono),
      describeParent: describeProcess,
      isOwnCanary,
      hostNetnsInode: hostNetnsInode(),
      netnsInodeOf,
      ...(opts.finalizeGraceMs !== undefined ? { finalizeGraceMs: opts.finalizeGraceMs } : {}),
      ...(opts.maxStreamBytes !== undefined ? { maxStreamBytes: opts.maxStreamBytes } : {}),
    },
    { src: null, mode: settings.mode },
    emit,
  );
  const assembler = pipeline.assembler;

  const recording = (run: TracerRun | null | undefined): run is TracerRun => run !== null && run !== undefined && run.running && run.ready;
  const runs = () => [main, standby, ...retiring.map((r) => r.run)].filter((r): r is TracerRun => r !== null && r !== undefined);

  const publish = () => {
    const now = Date.now();
    pipeline.tick(now);
    // The previous tracer stays until the calls it supplies are published: their last bytes may still sit in
    // one of its CPU buffers after their exit (a call is published once its exit's count of them came).
    for (const r of retiring) if (now >= r.deadline || !assembler.hasOpenCallStartedBefore(r.cutoverEpochUs)) void retire(r);
    deliver();
  };

  // A plugin found gone from /proc is given up on only once the tracer's records have moved past the
  // moment it was found gone: until then its exit may still be in bpftrace's backlog.
  const goneSince = new Map<string, number>();
  const checkLiveness = () => {
    const nowUs = Date.now() * 1000;
    const nowMonoUs = monotonicNowUs();
    let waiting = false;
    const open = new Set<string>();
    for (const call of assembler.runningCalls()) {
      const key = `${call.pid}:${call.start}`;
      open.add(key);
      if (nowUs - call.startedAtUs < 2_000_000 || isProcessAlive(call.pid, call.start)) continue;
      const since = goneSince.get(key);
      if (since === undefined) {
        goneSince.set(key, nowMonoUs);
        waiting = true;
      } else if (pipeline.releasedTs > since + GONE_PAST_US) {
        goneSince.delete(key);
        emit(assembler.processGone(call.pid, call.start, 'the plugin process is gone but its exit was not recorded'));
      } else {
        waiting = true;
      }
    }
    for (const key of goneSince.keys()) if (!open.has(key)) goneSince.delete(key);
    // An exec of our own moves the tracer's stream forward even on an idle node.
    if (waiting) runCanary();
  };

  const absorb = (run: TracerRun) => {
    past.lostEvents += run.lostEvents;
    past.malformedLines += run.malformedLines;
  };

  const announce = (gap: TracerGap | null) => {
    if (gap === null) return;
    const event: TracerEvent = { type: 'tracer.gap', gap };
    tracerListeners.publish((l) => l.onTracerEvent(event));
  };

  /** When no tracer is left recording, nothing will end the calls in flight: they are published as incomplete. */
  const abandonIfBlind = (): number => {
    if (runs().some(recording)) return 0;
    pipeline.flush();
    const abandoned = assembler.flushAll('the tracer stopped while the call ran');
    emit(abandoned);
    return abandoned.filter((e) => e.type === 'call.finished' && e.call.status === 'incomplete').length;
  };

  /** The processes a starting tracer must count as traced: live plugins and everything the assembler follows. */
  const seeds = () => [...new Set([...cniProcessPids(), ...assembler.livePids()])];

  const launch = async (role: 'main' | 'standby', seedPids: readonly number[] | undefined): Promise<TracerRun> => {
    const runSettings: TracerSettings = {
      ...settings,
      ...(role === 'standby' ? { mode: 'light' as const, perfBufferPages: Math.min(settings.perfBufferPages, STANDBY_PERF_BUFFER_PAGES) } : {}),
      ...(seedPids ? { seedPids } : {}),
      ...(settings.payloadPath === undefined ? { payloadPath: defaultPayloadPath() } : {}),
    };
    const run: TracerRun = new TracerRun(
      nextRunId++,
      runSettings,
      {
        onRecord: (rec, src) => pipeline.push(rec, src),
        onGone: (unexpected) => {
          pipeline.sourceGone(run.id, unexpected);
          // Calls that start from now until a new main tracer records have no payloads: recorded as light-mode calls.
          if (unexpected && run === main && run.settings.mode === 'full') pipeline.merger.setPayloadSource(null, 'light', monotonicNowUs());
        },
        onExit: (exit, unexpected) => onExit(run, exit, unexpected),
      },
      log.child({ tracer: role }),
    );
    starting.add(run);
    try {
      await run.start(readyTimeoutMs);
    } finally {
      starting.delete(run);
    }
    if (stopping) {
      // The collector stopped while it started: it must not outlive the stop.
      await run.stop();
      throw new TracerStartError('the collector stopped while the tracer started');
    }
    if (needsPayloadCheck(run.payloadPath) && settings.payloadPath === undefined) {
      const misread = await run.checkPayloads();
      recordPayloadVerdict(misread === null);
      if (misread === null) {
        log.info("full mode takes payloads at syscall exit (the canary's write read right)");
      } else {
        log.warn(
          { reason: misread },
          "full mode falls back to the syscall-entry payload probes: the syscall-exit probe did not read the canary's write right on this kernel; " +
            'payloads are then what was attempted (a failed or partial write is stored whole) and only fds 0-2 are followed',
        );
        await run.stop();
        return launch(role, seedPids);
      }
    }
    log.info({ role, mode: runSettings.mode, payloadPath: run.payloadPath, pid: run.pid }, 'tracer is recording');
    return run;
  };

  /** The main tracer supplies payloads from now on (full mode), or none does (light). */
  const mainTakesPayloads = (run: TracerRun) => {
    pipeline.merger.setPayloadSource(run.settings.mode === 'full' ? run.id : null, run.settings.mode, monotonicNowUs());
  };

  const onExit = (run: TracerRun, exit: TracerExit, unexpected: boolean) => {
    if (!unexpected) return;
    absorb(run);
    const why = describeExit(exit);
    if (retiring.some((r) => r.run === run)) {
      // The calls it supplied payloads for get no more: the merger reports them as they end, and they are marked.
      retiring = retiring.filter((r) => r.run !== run);
      return;
    }
    if (run === standby) {
      standby = null;
      standbyError = why;
      abandonIfBlind();
      log.warn({ why }, 'the standby tracer exited; restarting it');
      scheduleRestart('standby', why);
      return;
    }
    if (run !== main) return;
    main = null;
    lastError = why;
    failures.main = Date.now() - run.startedAt > HEALTHY_AFTER_MS ? 1 : failures.main + 1;
    const abandoned = abandonIfBlind();
    publish();
    announce(gaps.begin(Date.now() * 1000, lastError, abandoned));
    scheduleRestart('main', why);
  };

  const scheduleRestart = (role: 'main' | 'standby', why: string) => {
    if (role === 'main') restartCount++;
    else standbyRestarts++;
    const failed = role === 'main' ? failures.main : ++failures.standby;
    const delay = RESTART_BACKOFF_MS[Math.min(Math.max(failed, 1) - 1, RESTART_BACKOFF_MS.length - 1)]!;
    log.error({ role, why, restartInMs: delay }, 'bpftrace exited; restarting');
    const t = setTimeout(() => {
      if (stopping) return;
      launch(role, seeds())
        .then((run) => {
          if (stopping) {
            void run.stop();
            return;
          }
          if (role === 'standby') {
            standby = run;
            return;
          }
          main = run;
          mainTakesPayloads(run);
          const gap = gaps.end(Date.now() * 1000);
          if (gap) log.warn({ gapMs: Math.round((gap.endedAtUs! - gap.startedAtUs) / 1000), reason: gap.reason }, 'tracer restarted');
          announce(gap);
        })
        .catch((err: Error) => {
          if (role === 'main') {
            lastError = err.message;
            failures.main++;
          } else {
            standbyError = err.message;
          }
          if (!stopping) scheduleRestart(role, err.message);
        });
    }, delay);
    timers.push(t);
  };

  const startStandby = async () => {
    try {
      standby = await launch('standby', main ? seeds() : undefined);
    } catch (err) {
      standbyError = err instanceof Error ? err.message : String(err);
      if (!stopping) scheduleRestart('standby', standbyError);
    }
  };

  const retire = async (which: Retiring) => {
    if (!retiring.includes(which) || which.draining) return;
    const { run } = which;
    which.draining = true;
    // Whatever it recorded up to now goes into the pipeline before it stops. A call that started just before the
    // switch may have been on its way (in a CPU buffer, in the reorder window) when none was seen open: once its
    // exec is in, it keeps the tracer it takes its bytes from.
    await run.drain(STOP_DRAIN_MS);
    await new Promise((resolve) => setTimeout(resolve, RETIRE_RECHECK_MS + pipeline.reorderState().windowUs / 1000));
    if (!retiring.includes(which)) return;
    if (Date.now() < which.deadline && assembler.hasOpenCallStartedBefore(which.cutoverEpochUs)) {
      which.draining = false;
      return;
    }
    retiring = retiring.filter((r) => r !== which);
    log.info({ mode: run.settings.mode }, 'previous tracer stopped after the mode switch');
    await run.stop();
    absorb(run);
  };

  return {
    subscribe: (listener) => listeners.subscribe(listener),
    subscribeTracer: (listener) => tracerListeners.subscribe(listener),
    async start() {
      stopping = false;
      raiseOwnPriority(log);
      timers.push(setInterval(publish, opts.flushIntervalMs ?? 25));
      timers.push(setInterval(checkLiveness, opts.livenessIntervalMs ?? 5000));
      // Both compile at once (bpftrace's start is mostly CPU-bound compiling); the daemon records once the main one does.
      const standbyStarted = withStandby ? startStandby() : Promise.resolve();
      const run = await launch('main', undefined);
      main = run;
      mainTakesPayloads(run);
      await standbyStarted;
    },
    async setMode(mode) {
      if (mode === settings.mode && main) return;
      const old = main;
      const previous = settings;
      settings = { ...settings, mode };
      let run: TracerRun;
      try {
        // It counts as traced every process already followed, so it follows their trees once the old one stops.
        run = await launch('main', old ? seeds() : undefined);
      } catch (err) {
        settings = previous;
        throw err;
      }
      const cutover = monotonicNowUs();
      main = run;
      mainTakesPayloads(run);
      if (old) retiring = [...retiring, { run: old, cutoverEpochUs: wallClock.toEpochUs(cutover), deadline: Date.now() + (opts.handoffTimeoutMs ?? 600_000), draining: false }];
      log.info({ mode }, 'capture mode switched');
    },
    async stop() {
      stopping = true;
      for (const t of timers) clearTimeout(t);
      timers = [];
      // The publish timer is gone: release what bpftrace hands over while draining by hand.
      const releasing = setInterval(publish, opts.flushIntervalMs ?? 25);
      await Promise.all(runs().map((r) => r.drain(STOP_DRAIN_MS)));
      clearInterval(releasing);
      const all = [...runs(), ...starting];
      retiring = [];
      main = null;
      standby = null;
      await Promise.all(all.map((r) => r.stop()));
      for (const r of all) absorb(r);
      pipeline.flush();
      emit(assembler.flushAll('the tracer stopped while the call ran'));
      pipeline.stopTimers();
      deliver();
    },
    killNow() {
      stopping = true;
      for (const r of [...runs(), ...starting]) r.killNow();
    },
    status() {
      const run = main;
      const live = runs();
      return {
        running: run?.running ?? false,
        ready: run?.ready ?? false,
        mode: settings.mode,
        payloadPath: run?.payloadPath ?? null,
        pid: run?.pid ?? null,
        restarts: restartCount,
        lostEvents: past.lostEvents + live.reduce((n, r) => n + r.lostEvents, 0),
        malformedLines: past.malformedLines + live.reduce((n, r) => n + r.malformedLines, 0),
        lastRecordAt: pipeline.lastRecordAt ? new Date(pipeline.lastRecordAt).toISOString() : null,
        startedAt: run ? new Date(run.startedAt).toISOString() : null,
        lastError,
        handoffInProgress: retiring.length > 0,
        gaps: gaps.count,
        gapSeconds: gaps.seconds(Date.now() * 1000),
        lastGap: gapStatus(gaps.latest),
        ...reorderStatus(live.length > 0 ? pipeline : null),
        standby: withStandby ? standbyStatus(standby, standbyRestarts, standbyError) : null,
      };
    },
    stats() {
      const c = assembler.counters;
      return {
        openCalls: assembler.openCallCount,
        oldestRunningStartUs: assembler.runningCalls().reduce<number | null>((oldest, call) => (oldest === null || call.startedAtUs < oldest ? call.startedAtUs : oldest), null),
        callsStarted: c.callsStarted,
        callsFinished: c.callsFinished,
        records: c.records,
        orphanChunks: c.orphanChunks,
        callsMarked: { ...c.callsMarked },
      };
    },
  };
}

/**
 * This thread reads bpftrace's output: when it falls behind, bpftrace blocks
 * writing to the pipe and the kernel drops what its buffers cannot hold. It
 * runs at the tracer's priority (Linux sets it per thread: the main thread,
 * where the lines are parsed and assembled).
 */
function raiseOwnPriority(log: Logger): void {
  try {
    if (getPriority(0) > TRACER_NICE) setPriority(0, TRACER_NICE);
  } catch (err) {
    log.warn({ err: (err as Error).message }, "could not raise the collector's scheduling priority: on a busy node the tracer may lose records");
  }
}

function standbyStatus(run: TracerRun | null, restarts: number, lastError: string | null): StandbyStatus {
  const pid = run?.pid ?? null;
  const usage = pid === null ? null : processUsage(pid);
  return {
    running: run?.running ?? false,
    ready: run?.ready ?? false,
    pid,
    restarts,
    rssBytes: usage?.rssBytes ?? null,
    cpuSeconds: usage?.cpuSeconds ?? null,
    lastError,
  };
}

function reorderStatus(pipeline: RecordPipeline | null): Pick<TracerStatus, 'reorderWindowMs' | 'arrivalLagMs'> {
  if (!pipeline) return { reorderWindowMs: 0, arrivalLagMs: 0 };
  const { windowUs, maxLagUs } = pipeline.reorderState();
  return { reorderWindowMs: Math.round(windowUs) / 1000, arrivalLagMs: Math.round(maxLagUs) / 1000 };
}

function gapStatus(gap: TracerGap | null): GapStatus | null {
  if (gap === null) return null;
  const iso = (us: number) => new Date(us / 1000).toISOString();
  return { startedAt: iso(gap.startedAtUs), endedAt: gap.endedAtUs === null ? null : iso(gap.endedAtUs), reason: gap.reason, incompleteCalls: gap.incompleteCalls };
}
