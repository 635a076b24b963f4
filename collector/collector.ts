/**
 * The collector: supervises the tracer (restarts it with backoff), feeds its
 * lines through the parser and the call assembler, and publishes call events
 * to subscribers (the store, the live tail) in small batches. Knows nothing
 * of HTTP or SQL.
 *
 * Switching the capture mode starts a second tracer before the first stops:
 * the new one takes every call that starts from then on, the old one keeps
 * following the calls it already had until they end, so none is lost.
 */

import type { Logger } from 'pino';
import { createTopic } from '../lib/index.js';
import type { AssemblerOptions } from './assemble/assembler.js';
import type { Redactor } from './redact/redact-events.js';
import { cniProcessPids, describeProcess, isProcessAlive } from './tracer/proc-info.js';
import { MonoToEpoch } from './tracer/wall-clock.js';
import type { TracerExit, TracerSettings } from './tracer/tracer-process.js';
import type { CaptureMode } from '../bpf/index.js';
import { GapTracker } from './tracer/gap-tracker.js';
import { isOwnCanary, runCanary } from './tracer/canary.js';
import { describeExit, TracerRun } from './tracer/tracer-run.js';
import type { CallListener, CollectorEvent, TracerEvent, TracerEventListener, TracerGap } from './types.js';

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
}

export interface TracerStatus {
  readonly running: boolean;
  /** The tracer has seen the collector's own probe exec: calls are being recorded. */
  readonly ready: boolean;
  readonly mode: CaptureMode;
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
const HEALTHY_AFTER_MS = 30_000;
/** On stop, how long bpftrace may take to hand over what it recorded before the stop (out of the daemon's 5 s). */
const STOP_DRAIN_MS = 1_000;

export function createCollector(opts: CollectorOptions): Collector {
  const log = opts.logger;
  const listeners = createTopic<CallListener>((err) => log.error({ err }, 'a call subscriber failed; its events are dropped'));
  const tracerListeners = createTopic<TracerEventListener>((err) => log.error({ err }, 'a tracer event subscriber failed'));
  const gaps = new GapTracker();
  const wallClock = new MonoToEpoch(undefined, {
    onStep: (stepUs) => log.warn({ stepMs: Math.round(stepUs / 1000) }, 'the wall clock stepped; calls recorded from now on are dated by the new time'),
  });
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  let settings = opts.tracer;
  let pending: CollectorEvent[] = [];
  let current: TracerRun | null = null;
  let retiring: { run: TracerRun; deadline: number } | null = null;
  let stopping = false;
  let consecutiveFailures = 0;
  let restartCount = 0;
  let lastError: string | null = null;
  let timers: NodeJS.Timeout[] = [];
  // Totals of runs that have ended, so counters do not go back on a restart.
  const past = { lostEvents: 0, malformedLines: 0, callsStarted: 0, callsFinished: 0, records: 0, orphanChunks: 0 };

  const assemblerOptions = (admitTopLevel?: (ppid: number) => boolean, foreignPids?: readonly number[]): AssemblerOptions => ({
    monoToEpochUs: (mono) => wallClock.toEpochUs(mono),
    describeParent: describeProcess,
    isOwnCanary,
    ...(opts.finalizeGraceMs !== undefined ? { finalizeGraceMs: opts.finalizeGraceMs } : {}),
    ...(opts.maxStreamBytes !== undefined ? { maxStreamBytes: opts.maxStreamBytes } : {}),
    ...(admitTopLevel ? { admitTopLevel } : {}),
    ...(foreignPids ? { foreignPids } : {}),
  });

  // While two tracers overlap, both may see a call that starts at the switch: the first to report it keeps it.
  const owners = new Map<string, TracerRun>();
  const suppressed = new Set<string>();
  const emitFrom = (run: TracerRun, events: readonly CollectorEvent[]) => {
    for (const ev of events) {
      const key = `${ev.call.pid}:${ev.call.processStart}`;
      if (retiring === null && owners.size === 0) {
        pending.push(ev);
        continue;
      }
      const owner = owners.get(key);
      if (ev.type === 'call.started') {
        if (owner && owner !== run) suppressed.add(ev.call.id);
        else owners.set(key, run);
      }
      if (suppressed.has(ev.call.id)) {
        if (ev.type === 'call.finished') suppressed.delete(ev.call.id);
        continue;
      }
      if (ev.type === 'call.finished' && owner === run) owners.delete(key);
      pending.push(ev);
    }
    // Deliver right after the current I/O callback instead of at the next publish tick: events of
    // one chunk of tracer output still go out as one batch, and the live tail gets them ~12 ms sooner.
    if (pending.length > 0 && !deliveryScheduled) {
      deliveryScheduled = true;
      setImmediate(deliver);
    }
  };

  let deliveryScheduled = false;
  const deliver = () => {
    deliveryScheduled = false;
    if (pending.length === 0) return;
    // Redacted here, once per event, so the store and the live tail get the same bytes and neither the raw ones.
    const batch = opts.redactor ? opts.redactor.callEvents(pending) : pending;
    pending = [];
    listeners.publish((l) => l.onEvents(batch));
  };

  const publish = () => {
    const now = Date.now();
    current?.releaseIfQuiet(now);
    retiring?.run.releaseIfQuiet(now);
    if (current) emitFrom(current, current.assembler.tick(now));
    if (retiring) {
      emitFrom(retiring.run, retiring.run.assembler.tick(now));
      if (retiring.run.assembler.openCallCount === 0 || now >= retiring.deadline) void retire();
    }
    deliver();
  };

  // A plugin found gone from /proc is given up on only once the tracer's records have moved past the
  // moment it was found gone: until then its exit may still be in bpftrace's backlog.
  const goneSince = new Map<string, number>();
  const checkLiveness = () => {
    const nowUs = Date.now() * 1000;
    const nowMonoUs = Number(process.hrtime.bigint() / 1000n);
    let waiting = false;
    const open = new Set<string>();
    for (const run of [current, retiring?.run]) {
      if (!run) continue;
      for (const call of run.assembler.runningCalls()) {
        const key = `${call.pid}:${call.start}`;
        open.add(key);
        if (nowUs - call.startedAtUs < 2_000_000 || isProcessAlive(call.pid, call.start)) continue;
        const since = goneSince.get(key);
        if (since === undefined) {
          goneSince.set(key, nowMonoUs);
          waiting = true;
        } else if (run.releasedTs > since) {
          goneSince.delete(key);
          emitFrom(run, run.assembler.processGone(call.pid, call.start, 'the plugin process is gone but its exit was not recorded'));
        } else {
          waiting = true;
        }
      }
    }
    for (const key of goneSince.keys()) if (!open.has(key)) goneSince.delete(key);
    // An exec of our own moves the tracer's stream forward even on an idle node.
    if (waiting) runCanary();
  };

  const absorb = (run: TracerRun) => {
    const c = run.assembler.counters;
    past.lostEvents += c.lostEvents;
    past.malformedLines += run.malformedLines;
    past.callsStarted += c.callsStarted;
    past.callsFinished += c.callsFinished;
    past.records += c.records;
    past.orphanChunks += c.orphanChunks;
  };

  const retire = async () => {
    if (!retiring) return;
    const { run } = retiring;
    retiring = null;
    log.info({ mode: run.settings.mode, unfinished: run.assembler.openCallCount }, 'previous tracer stopped after the mode switch');
    await run.stop();
    absorb(run);
    owners.clear();
    suppressed.clear();
  };

  const launch = async (admitTopLevel?: (ppid: number) => boolean, seedPids?: readonly number[]): Promise<TracerRun> => {
    const run: TracerRun = new TracerRun(
      seedPids ? { ...settings, seedPids } : settings,
      assemblerOptions(admitTopLevel, seedPids),
      {
        emit: (events) => emitFrom(run, events),
        onUnexpectedExit: (exit) => onUnexpectedExit(run, exit),
      },
      log,
    );
    await run.start(readyTimeoutMs);
    log.info({ mode: settings.mode, pid: run.pid }, 'tracer is recording');
    return run;
  };

  const announce = (gap: TracerGap | null) => {
    if (gap === null) return;
    const event: TracerEvent = { type: 'tracer.gap', gap };
    tracerListeners.publish((l) => l.onTracerEvent(event));
  };

  const onUnexpectedExit = (run: TracerRun, exit: TracerExit) => {
    if (retiring?.run === run) {
      retiring = null;
      absorb(run);
      return;
    }
    if (run !== current) return;
    absorb(run);
    current = null;
    lastError = describeExit(exit);
    consecutiveFailures = Date.now() - run.startedAt > HEALTHY_AFTER_MS ? 1 : consecutiveFailures + 1;
    // The calls it followed are already in `pending` as incomplete: publish them before saying so.
    publish();
    announce(gaps.begin(Date.now() * 1000, lastError, run.abandonedCalls));
    scheduleRestart(lastError);
  };

  const scheduleRestart = (why: string) => {
    restartCount++;
    const delay = RESTART_BACKOFF_MS[Math.min(consecutiveFailures - 1, RESTART_BACKOFF_MS.length - 1)]!;
    log.error({ why, restartInMs: delay }, 'bpftrace exited; restarting');
    const t = setTimeout(() => {
      if (stopping) return;
      launch()
        .then((run) => {
          if (stopping) {
            void run.stop();
          } else {
            current = run;
            const gap = gaps.end(Date.now() * 1000);
            if (gap) log.warn({ gapMs: Math.round((gap.endedAtUs! - gap.startedAtUs) / 1000), reason: gap.reason }, 'tracer restarted; calls were not recorded during the gap');
            announce(gap);
          }
        })
        .catch((err: Error) => {
          lastError = err.message;
          consecutiveFailures++;
          if (!stopping) scheduleRestart(err.message);
        });
    }, delay);
    timers.push(t);
  };

  return {
    subscribe: (listener) => listeners.subscribe(listener),
    subscribeTracer: (listener) => tracerListeners.subscribe(listener),
    async start() {
      stopping = false;
      timers.push(setInterval(publish, opts.flushIntervalMs ?? 25));
      timers.push(setInterval(checkLiveness, opts.livenessIntervalMs ?? 5000));
      current = await launch();
    },
    async setMode(mode) {
      if (mode === settings.mode && current) return;
      if (retiring) await retire();
      const old = current;
      settings = { ...settings, mode };
      if (old) {
        // Until the new tracer records, calls starting now may be seen by both: track who reported each first.
        for (const call of old.assembler.runningCalls()) owners.set(`${call.pid}:${call.start}`, old);
        retiring = { run: old, deadline: Date.now() + (opts.handoffTimeoutMs ?? 600_000) };
      }
      try {
        // The new tracer leaves to the old one every process the old one already follows: those the
        // old one knows, and every live process with CNI_COMMAND in its environment (the old one's
        // view may lag behind). The new tracer counts them as traced, and ignores them and their
        // descendants.
        const seeds = old ? [...new Set([...cniProcessPids(), ...old.assembler.livePids()])] : undefined;
        current = await launch(old ? (ppid) => !old.assembler.knowsProcess(ppid) : undefined, seeds);
      } catch (err) {
        current = old;
        retiring = null;
        settings = old ? old.settings : settings;
        throw err;
      }
      old?.assembler.closeToNewCalls();
      log.info({ mode }, 'capture mode switched');
    },
    async stop() {
      stopping = true;
      for (const t of timers) clearTimeout(t);
      timers = [];
      // The publish timer is gone: release what bpftrace hands over while draining by hand.
      const releasing = setInterval(publish, opts.flushIntervalMs ?? 25);
      await Promise.all([current?.drain(STOP_DRAIN_MS), retiring?.run.drain(STOP_DRAIN_MS)]);
      clearInterval(releasing);
      await retire();
      if (current) {
        await current.stop();
        absorb(current);
        current = null;
      }
      publish();
    },
    killNow() {
      stopping = true;
      current?.killNow();
      retiring?.run.killNow();
    },
    status() {
      const run = current;
      return {
        running: run?.running ?? false,
        ready: run?.ready ?? false,
        mode: settings.mode,
        pid: run?.pid ?? null,
        restarts: restartCount,
        lostEvents: past.lostEvents + (run?.assembler.counters.lostEvents ?? 0) + (retiring?.run.assembler.counters.lostEvents ?? 0),
        malformedLines: past.malformedLines + (run?.malformedLines ?? 0) + (retiring?.run.malformedLines ?? 0),
        lastRecordAt: run?.lastRecordAt ? new Date(run.lastRecordAt).toISOString() : null,
        startedAt: run ? new Date(run.startedAt).toISOString() : null,
        lastError,
        handoffInProgress: retiring !== null,
        gaps: gaps.count,
        gapSeconds: gaps.seconds(Date.now() * 1000),
        lastGap: gapStatus(gaps.latest),
        ...reorderStatus(run),
      };
    },
    stats() {
      const runs = [current, retiring?.run].filter((r): r is TracerRun => r !== null && r !== undefined);
      const sum = (f: (r: TracerRun) => number) => runs.reduce((n, r) => n + f(r), 0);
      return {
        openCalls: sum((r) => r.assembler.openCallCount),
        oldestRunningStartUs: runs.flatMap((r) => r.assembler.runningCalls()).reduce<number | null>((oldest, c) => (oldest === null || c.startedAtUs < oldest ? c.startedAtUs : oldest), null),
        callsStarted: past.callsStarted + sum((r) => r.assembler.counters.callsStarted),
        callsFinished: past.callsFinished + sum((r) => r.assembler.counters.callsFinished),
        records: past.records + sum((r) => r.assembler.counters.records),
        orphanChunks: past.orphanChunks + sum((r) => r.assembler.counters.orphanChunks),
      };
    },
  };
}

function reorderStatus(run: TracerRun | null): Pick<TracerStatus, 'reorderWindowMs' | 'arrivalLagMs'> {
  if (!run) return { reorderWindowMs: 0, arrivalLagMs: 0 };
  const { windowUs, maxLagUs } = run.reorderState();
  return { reorderWindowMs: Math.round(windowUs) / 1000, arrivalLagMs: Math.round(maxLagUs) / 1000 };
}

function gapStatus(gap: TracerGap | null): GapStatus | null {
  if (gap === null) return null;
  const iso = (us: number) => new Date(us / 1000).toISOString();
  return { startedAt: iso(gap.startedAtUs), endedAt: gap.endedAtUs === null ? null : iso(gap.endedAtUs), reason: gap.reason, incompleteCalls: gap.incompleteCalls };
}
