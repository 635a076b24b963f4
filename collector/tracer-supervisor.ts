/**
 * The tracers' supervisor: starts the main tracer (in the capture mode asked
 * for) and the sched-only standby beside it, restarts either with backoff
 * when it dies, switches the capture mode by starting a new main tracer
 * before the old one retires (tracer/tracer-handoff.ts), stops them all, and
 * says how they are (tracer-status.ts). When no tracer is left recording, the
 * calls in flight are ended incomplete and a gap is announced.
 *
 * It knows the record pipeline only through the few things it asks of it
 * (SupervisedPipeline): where records go, which tracer supplies payloads,
 * what is still followed.
 */

import { isoFromMs } from '../lib/index.js';
import type { Logger } from 'pino';
import type { CaptureMode, TracerLineError } from '../bpf/index.js';
import type { CanaryProof } from './tracer/record-framer.js';
import { GapTracker } from './tracer/gap-tracker.js';
import { cniProcessPids, processUsage } from './tracer/proc-info.js';
import type { TracerExit, TracerSettings } from './tracer/tracer-process.js';
import { STOP_DRAIN_MS, TracerHandoff, type HandoffCalls } from './tracer/tracer-handoff.js';
import { TracerLauncher, type TracerRole } from './tracer/tracer-launch.js';
import { describeExit, type TracerRun } from './tracer/tracer-run.js';
import { gapStatus, reorderStatus, standbyStatus, type TracerStatus } from './tracer-status.js';
import { monotonicNowUs } from './record-pipeline.js';
import type { TracerGap } from './types.js';

const RESTART_BACKOFF_MS = [250, 500, 1000, 2000];
/** A main tracer that ran this long before it died starts the backoff over. */
const HEALTHY_AFTER_MS = 30_000;
export const TRACER_STOPPED_REASON = 'the tracer stopped while the call ran';

/** What the supervisor needs of the record pipeline (record-pipeline.ts). */
export interface SupervisedPipeline extends HandoffCalls {
  /** One line of tracer `src`; why it is malformed, or null. */
  push(line: Buffer, src: number): TracerLineError | null;
  /** What tracer run `src`'s lines have proved so far (its canary). */
  canaryProof(src: number): CanaryProof;
  /** Tracer `src` ended (see RecordFlow.sourceGone). */
  sourceGone(src: number, unexpected: boolean): void;
  /** Calls that start from now on take their payloads from tracer `src`; null: none does. */
  setPayloadSource(src: number | null, mode: CaptureMode): void;
  /** Ends every call still open (no tracer left to end them); returns how many ended incomplete. */
  endAllCalls(reason: string): number;
  /** The processes the calls are followed through. */
  livePids(): readonly number[];
  reorderState(): { windowUs: number; maxLagUs: number };
  /** When the last line from any tracer arrived (Date.now()). */
  readonly lastRecordAt: number | null;
}

export interface SupervisorOptions {
  readonly settings: TracerSettings;
  readonly log: Logger;
  /** How long bpftrace may take to compile, load and prove it sees execs. */
  readonly readyTimeoutMs: number;
  /** After a mode switch, how long the old tracer may keep following its calls. */
  readonly handoffTimeoutMs: number;
  /** Kernel monotonic µs → µs since the epoch (the calls' clock). */
  toEpochUs(monoUs: number): number;
  /** Runs a publish tick now: what the main tracer's death completed goes out before its gap is announced. */
  publishNow(): void;
  announceGap(gap: TracerGap | null): void;
}

export class TracerSupervisor {
  private settings: TracerSettings;
  private main: TracerRun | null = null;
  private standby: TracerRun | null = null;
  private stopping = false;
  private readonly launcher: TracerLauncher;
  private readonly handoff: TracerHandoff;
  private readonly gaps = new GapTracker();
  private readonly failures = { main: 0, standby: 0 };
  private restarts = { main: 0, standby: 0 };
  private readonly lastError: { main: string | null; standby: string | null } = { main: null, standby: null };
  private restartTimers: NodeJS.Timeout[] = [];
  /** Totals of runs that have ended, so counters do not go back on a restart. */
  private readonly past = { lostEvents: 0, malformedLines: 0 };

  constructor(
    private readonly pipeline: SupervisedPipeline,
    private readonly opts: SupervisorOptions,
  ) {
    this.settings = opts.settings;
    this.launcher = new TracerLauncher(
      {
        // The pipeline's own methods: a run's lines go straight into it.
        onLine: pipeline.push,
        canaryProof: pipeline.canaryProof,
        onGone: (run, unexpected) => {
          pipeline.sourceGone(run.id, unexpected);
          // Calls that start from now until a new main tracer records have no payloads: recorded as light-mode calls.
          if (unexpected && run === this.main && run.settings.mode === 'full') pipeline.setPayloadSource(null, 'light');
        },
        onExit: (run, exit, unexpected) => this.onExit(run, exit, unexpected),
      },
      { log: opts.log, readyTimeoutMs: opts.readyTimeoutMs, settings: () => this.settings, isStopping: () => this.stopping },
    );
    this.handoff = new TracerHandoff(pipeline, (run) => this.absorb(run), opts.log);
  }

  get mode(): CaptureMode {
    return this.settings.mode;
  }

  /** Starts both tracers; resolves once the main one records. */
  async start(): Promise<void> {
    this.stopping = false;
    // Both compile at once (bpftrace's start is mostly CPU-bound compiling); the daemon records once the main one does.
    const standbyStarted = this.startStandby();
    const run = await this.launcher.launch('main', undefined);
    this.main = run;
    this.mainTakesPayloads(run);
    await standbyStarted;
  }

  /**
   * A new main tracer in `mode` takes the calls that start from now on; the old one keeps supplying the calls
   * it already had until they end, so no call is lost, duplicated or re-parented.
   */
  async setMode(mode: CaptureMode): Promise<void> {
    if (mode === this.settings.mode && this.main) return;
    const old = this.main;
    const previous = this.settings;
    this.settings = { ...this.settings, mode };
    let run: TracerRun;
    try {
      // It counts as traced every process already followed, so it follows their trees once the old one stops.
      run = await this.launcher.launch('main', old ? this.seeds() : undefined);
    } catch (err) {
      this.settings = previous;
      throw err;
    }
    const cutover = monotonicNowUs();
    this.main = run;
    this.mainTakesPayloads(run);
    if (old) this.handoff.add(old, this.opts.toEpochUs(cutover), Date.now() + this.opts.handoffTimeoutMs);
    this.opts.log.info({ mode }, 'capture mode switched');
  }

  /** On every publish tick: retires the previous main tracers whose calls are all published. */
  checkHandoff(nowMs: number): void {
    this.handoff.check(nowMs);
  }

  /** The first step of a stop: no restart from now on. */
  halt(): void {
    this.stopping = true;
    for (const t of this.restartTimers) clearTimeout(t);
    this.restartTimers = [];
  }

  /** Lets every tracer hand over what it recorded before the stop. */
  async drain(): Promise<void> {
    await Promise.all(this.runs().map((r) => r.drain(STOP_DRAIN_MS)));
  }

  /** Stops every tracer, those still starting included. */
  async stopRuns(): Promise<void> {
    const all = [...this.runs(), ...this.launcher.starting];
    this.handoff.clear();
    this.main = null;
    this.standby = null;
    await Promise.all(all.map((r) => r.stop()));
    for (const r of all) this.absorb(r);
  }

  /** SIGKILLs every bpftrace at once, synchronously. */
  killNow(): void {
    this.stopping = true;
    for (const r of [...this.runs(), ...this.launcher.starting]) r.killNow();
  }

  status(): TracerStatus {
    const run = this.main;
    const live = this.runs();
    const standbyPid = this.standby?.pid ?? null;
    return {
      running: run?.running ?? false,
      ready: run?.ready ?? false,
      mode: this.settings.mode,
      payloadPath: run?.payloadPath ?? null,
      pid: run?.pid ?? null,
      restarts: this.restarts.main,
      lostEvents: this.past.lostEvents + live.reduce((n, r) => n + r.lostEvents, 0),
      malformedLines: this.past.malformedLines + live.reduce((n, r) => n + r.malformedLines, 0),
      lastRecordAt: this.pipeline.lastRecordAt ? isoFromMs(this.pipeline.lastRecordAt) : null,
      startedAt: run ? isoFromMs(run.startedAt) : null,
      lastError: this.lastError.main,
      handoffInProgress: this.handoff.inProgress,
      gaps: this.gaps.count,
      gapSeconds: this.gaps.seconds(Date.now() * 1000),
      lastGap: gapStatus(this.gaps.latest),
      ...reorderStatus(live.length > 0 ? this.pipeline.reorderState() : null),
      standby: standbyStatus(this.standby, standbyPid === null ? null : processUsage(standbyPid), this.restarts.standby, this.lastError.standby),
    };
  }

  private runs(): TracerRun[] {
    return [this.main, this.standby, ...this.handoff.runs].filter((r): r is TracerRun => r !== null);
  }

  private recording(): boolean {
    return this.runs().some((r) => r.running && r.ready);
  }

  private absorb(run: TracerRun): void {
    this.past.lostEvents += run.lostEvents;
    this.past.malformedLines += run.malformedLines;
  }

  /** The processes a starting tracer must count as traced: live plugins and everything the calls are followed through. */
  private seeds(): number[] {
    return [...new Set([...cniProcessPids(), ...this.pipeline.livePids()])];
  }

  /** The main tracer supplies payloads from now on (full mode), or none does (light). */
  private mainTakesPayloads(run: TracerRun): void {
    this.pipeline.setPayloadSource(run.settings.mode === 'full' ? run.id : null, run.settings.mode);
  }

  /** When no tracer is left recording, nothing will end the calls in flight: they are published as incomplete. How many. */
  private abandonIfBlind(): number {
    if (this.recording()) return 0;
    return this.pipeline.endAllCalls(TRACER_STOPPED_REASON);
  }

  private onExit(run: TracerRun, exit: TracerExit, unexpected: boolean): void {
    if (!unexpected) return;
    this.absorb(run);
    const why = describeExit(exit);
    if (this.handoff.forget(run)) return;
    if (run === this.standby) {
      this.standby = null;
      this.lastError.standby = why;
      this.abandonIfBlind();
      this.opts.log.warn({ why }, 'the standby tracer exited; restarting it');
      this.scheduleRestart('standby', why);
      return;
    }
    if (run !== this.main) return;
    this.main = null;
    this.lastError.main = why;
    this.failures.main = Date.now() - run.startedAt > HEALTHY_AFTER_MS ? 1 : this.failures.main + 1;
    const abandoned = this.abandonIfBlind();
    this.opts.publishNow();
    this.opts.announceGap(this.gaps.begin(Date.now() * 1000, why, abandoned));
    this.scheduleRestart('main', why);
  }

  private scheduleRestart(role: TracerRole, why: string): void {
    this.restarts[role]++;
    const failed = role === 'main' ? this.failures.main : ++this.failures.standby;
    const delay = RESTART_BACKOFF_MS[Math.min(Math.max(failed, 1) - 1, RESTART_BACKOFF_MS.length - 1)]!;
    this.opts.log.error({ role, why, restartInMs: delay }, 'bpftrace exited; restarting');
    const t = setTimeout(() => {
      if (this.stopping) return;
      this.launcher
        .launch(role, this.seeds())
        .then((run) => this.restarted(role, run))
        .catch((err: Error) => {
          this.lastError[role] = err.message;
          if (role === 'main') this.failures.main++;
          if (!this.stopping) this.scheduleRestart(role, err.message);
        });
    }, delay);
    this.restartTimers.push(t);
  }

  private restarted(role: TracerRole, run: TracerRun): void {
    if (this.stopping) {
      void run.stop();
      return;
    }
    if (role === 'standby') {
      this.standby = run;
      return;
    }
    this.main = run;
    this.mainTakesPayloads(run);
    const gap = this.gaps.end(Date.now() * 1000);
    if (gap) this.opts.log.warn({ gapMs: Math.round((gap.endedAtUs! - gap.startedAtUs) / 1000), reason: gap.reason }, 'tracer restarted');
    this.opts.announceGap(gap);
  }

  private async startStandby(): Promise<void> {
    try {
      this.standby = await this.launcher.launch('standby', this.main ? this.seeds() : undefined);
    } catch (err) {
      this.lastError.standby = err instanceof Error ? err.message : String(err);
      if (!this.stopping) this.scheduleRestart('standby', this.lastError.standby);
    }
  }
}
