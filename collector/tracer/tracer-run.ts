/**
 * One run of the tracer: a bpftrace process, its own call assembler, and the
 * proof that it records (it has seen the collector's canary exec). The
 * collector owns one run at a time, two while switching capture modes.
 */

import type { Logger } from 'pino';
import { CallAssembler, type AssemblerOptions } from '../assemble/assembler.js';
import { runCanary } from './canary.js';
import { startTracer, type RunningTracer, type TracerExit, type TracerSettings } from './tracer-process.js';
import { RecordSequencer } from './record-sequencer.js';
import { REORDER_WINDOW, ReorderWindow } from './reorder-window.js';
import { parseTracerBytes, type PayloadPath, type TracerRecord } from '../../bpf/index.js';
import type { CollectorEvent } from '../types.js';

/** Silence from bpftrace after which every record it printed is out. */
const QUIET_MS = 40;
/** Lost records are logged at most this often (summed), however often bpftrace reports them. */
const LOST_LOG_INTERVAL_MS = 10_000;
/** How long after readiness the canary's write may take to show before the exit probe is taken for misreading. */
const PAYLOAD_CHECK_MS = 3_000;

/**
 * Whether full mode's syscall-exit probe read the canary's write right on
 * this kernel: checked by the first full-mode run, then known for the
 * daemon's life (the kernel does not change under it).
 */
let exitProbeVerdict: 'ok' | 'misreads' | null = null;

/** Now on the kernel's monotonic clock, the clock of the tracer's timestamps (libuv reads CLOCK_MONOTONIC too). */
export function monotonicNowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class TracerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TracerStartError';
  }
}

export interface RunCallbacks {
  /** Events completed by a line (call.started) or by the run's end. */
  emit(events: readonly CollectorEvent[]): void;
  /** bpftrace went away without being asked to. */
  onUnexpectedExit(exit: TracerExit): void;
}

export class TracerRun {
  readonly assembler: CallAssembler;
  /** Records wait here until no earlier one can still arrive from another CPU's buffer. */
  private readonly sequencer: RecordSequencer;
  malformedLines = 0;
  /** Calls still open when bpftrace went away, published as incomplete. */
  abandonedCalls = 0;
  lastRecordAt: number | null = null;
  /** Kernel time (µs) of the newest record handed to the assembler: how far the call state is up to date. */
  releasedTs = 0;
  /** When the last record with a timestamp arrived (kernel monotonic µs). */
  private arrivalUs = 0;
  readonly startedAt = Date.now();
  private tracer: RunningTracer | null = null;
  private isReady = false;
  private stopping = false;
  /** Stopping bpftrace to start it again with the other payload probes: not an unexpected exit. */
  private switchingProbes = false;
  /** How full mode takes payloads in this run; null in light mode. */
  private payloadProbes: PayloadPath | null;
  /** Armed while records are held, for when the oldest is due by the clock (see armClockRelease). */
  private clockTimer: NodeJS.Timeout | null = null;
  private lostUnlogged = 0;
  private lostLoggedAt = 0;

  constructor(
    readonly settings: TracerSettings,
    assemblerOptions: AssemblerOptions,
    private readonly callbacks: RunCallbacks,
    private readonly log: Logger,
  ) {
    this.assembler = new CallAssembler({ ...assemblerOptions, captureMode: settings.mode });
    this.sequencer = new RecordSequencer(new ReorderWindow(REORDER_WINDOW));
    this.payloadProbes = settings.mode !== 'full' ? null : (settings.payloadPath ?? (exitProbeVerdict === 'misreads' ? 'syscall-entry' : 'syscall-exit'));
  }

  /** Full mode's payload probes in this run (`syscall-exit`, or the `syscall-entry` fallback); null in light mode. */
  get payloadPath(): PayloadPath | null {
    return this.payloadProbes;
  }

  /** The reorder window (µs) and the largest recent arrival lag it follows. */
  reorderState(nowUs = monotonicNowUs()): { windowUs: number; maxLagUs: number } {
    return { windowUs: this.sequencer.window.windowUs(nowUs), maxLagUs: this.sequencer.window.maxLagUs(nowUs) };
  }

  /**
   * Called often by the collector: releases what the reorder window has
   * passed (it shrinks as lags age out), and everything once bpftrace has
   * gone quiet, when nothing earlier can still come.
   */
  releaseIfQuiet(nowMs: number): void {
    if (this.sequencer.heldCount > 0) this.feed(this.sequencer.releaseDue(monotonicNowUs()));
    const seen = this.lastRecordAt;
    if (this.sequencer.heldCount === 0 || seen === null || nowMs - seen < QUIET_MS) return;
    // Timers run before I/O in Node's loop: after a stall of this process, lines may be waiting in the
    // pipe. setImmediate runs after the I/O phase, so "still nothing new" then means bpftrace is quiet.
    setImmediate(() => {
      if (this.lastRecordAt === seen) this.feed(this.sequencer.flush());
    });
  }

  get running(): boolean {
    return this.tracer !== null;
  }

  get ready(): boolean {
    return this.isReady;
  }

  get pid(): number | null {
    return this.tracer?.pid ?? null;
  }

  /**
   * Starts bpftrace; resolves once it has recorded the canary exec. In full
   * mode, the first time on this kernel, it also waits for the canary's
   * write: the syscall-exit probe reads the syscall's arguments from where
   * it expects the kernel to have saved the user registers; if the canary's
   * bytes do not come through, bpftrace is started again with the entry
   * probes (what was attempted, fds 0-2 only), and the log says so.
   */
  async start(readyTimeoutMs: number): Promise<void> {
    await this.launch(readyTimeoutMs);
    if (this.payloadProbes !== 'syscall-exit' || exitProbeVerdict === 'ok' || this.settings.payloadPath !== undefined) return;
    const misread = await this.checkPayloads();
    if (misread === null) {
      exitProbeVerdict = 'ok';
      this.log.info('full mode takes payloads at syscall exit (the canary\'s write read right)');
      return;
    }
    exitProbeVerdict = 'misreads';
    this.log.warn(
      { reason: misread },
      'full mode falls back to the syscall-entry payload probes: the syscall-exit probe did not read the canary\'s write right on this kernel; ' +
        'payloads are then what was attempted (a failed or partial write is stored whole) and only fds 0-2 are followed',
    );
    this.switchingProbes = true;
    try {
      await this.tracer?.stop();
    } finally {
      this.switchingProbes = false;
    }
    this.payloadProbes = 'syscall-entry';
    await this.launch(readyTimeoutMs);
  }

  /** Runs canaries until one's write is seen with its bytes; why not, or null when it was. */
  private async checkPayloads(): Promise<string | null> {
    const deadline = Date.now() + PAYLOAD_CHECK_MS;
    let nextCanary = 0;
    while (this.tracer && Date.now() < deadline) {
      if (this.assembler.counters.canaryPayloads > 0) return null;
      if (Date.now() >= nextCanary) {
        runCanary();
        nextCanary = Date.now() + 250;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (this.assembler.counters.canaryPayloads > 0) return null;
    if (!this.tracer) return 'bpftrace stopped during the check';
    const wrong = this.assembler.counters.canaryPayloadMismatches;
    return wrong > 0 ? `the canary's write came with other bytes (${wrong} times)` : `no canary write was seen within ${PAYLOAD_CHECK_MS / 1000} s`;
  }

  private launch(readyTimeoutMs: number): Promise<void> {
    // Canaries an earlier bpftrace of this run saw (before a switch of payload probes) prove nothing about this one.
    const canariesBefore = this.assembler.counters.canaries;
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearInterval(canary);
        clearTimeout(timeout);
        if (err) reject(err);
        else resolve();
      };
      const canary = setInterval(() => {
        if (this.assembler.counters.canaries > canariesBefore) {
          this.isReady = true;
          settle();
        } else {
          runCanary();
        }
      }, 200);
      const timeout = setTimeout(
        () => settle(new TracerStartError(`bpftrace did not start recording within ${readyTimeoutMs / 1000} s`)),
        readyTimeoutMs,
      );
      this.tracer = startTracer(
        this.payloadProbes === null ? this.settings : { ...this.settings, payloadPath: this.payloadProbes },
        {
          onLine: (line) => this.onLine(line),
          onOverlongLine: () => {
            this.malformedLines++;
          },
          onExit: (exit) => {
            this.tracer = null;
            this.disarmClockRelease();
            this.feed(this.sequencer.flush());
            this.isReady = false;
            const abandoned = this.assembler.flushAll('the tracer stopped while the call ran');
            this.abandonedCalls = abandoned.filter((e) => e.type === 'call.finished' && e.call.status === 'incomplete').length;
            this.callbacks.emit(abandoned);
            if (!settled) settle(new TracerStartError(describeExit(exit)));
            else if (!this.stopping && !this.switchingProbes) this.callbacks.onUnexpectedExit(exit);
          },
        },
        this.log,
      );
    });
  }

  /**
   * Waits (at most `timeoutMs`) until bpftrace has handed over what the
   * kernel recorded up to now: a canary exec'd now is seen only after every
   * earlier record. Before a stop, so a plugin that exited just before it is
   * stored with its exit, not as incomplete.
   */
  async drain(timeoutMs: number): Promise<void> {
    if (!this.tracer || !this.isReady) return;
    const seen = this.assembler.counters.canaries;
    const deadline = Date.now() + timeoutMs;
    let nextCanary = 0;
    while (this.tracer && this.assembler.counters.canaries <= seen && Date.now() < deadline) {
      if (Date.now() >= nextCanary) {
        runCanary();
        nextCanary = Date.now() + 200;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Stops bpftrace; the calls it still followed end as incomplete (through emit). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.tracer?.stop();
    this.disarmClockRelease();
  }

  private onLine(line: Buffer): void {
    const parsed = parseTracerBytes(line);
    this.lastRecordAt = Date.now();
    if (!parsed.ok) {
      this.malformedLines++;
      const e = parsed.error;
      this.log.debug({ reason: e.reason, kind: e.recordKind, bytes: e.lineLength }, 'malformed tracer line');
      return;
    }
    const rec = parsed.record;
    if (rec.kind === 'lost') this.reportLost(rec.count);
    // The clock is read for records with a timestamp (their arrival lag), not for each chunk line.
    if ('ts' in rec) this.arrivalUs = monotonicNowUs();
    this.feed(this.sequencer.push(rec, this.arrivalUs));
    // Per line: the arrival time just read stands for now (no clock read), and an armed timer costs a comparison.
    this.armClockRelease(this.arrivalUs);
  }

  /**
   * Lets held records go once the clock says nothing older can still come,
   * instead of waiting for the stream to move on: on a quiet node the last
   * records before a silence (a call's exec, its exit) go on some 30 ms after
   * they happened rather than after the 40 ms quiet flush that follows the
   * tracer's last line, and the live tail shows the call that much sooner.
   * One timer at a time, for the oldest record held.
   */
  private armClockRelease(nowUs: number): void {
    if (this.clockTimer !== null || this.tracer === null || this.sequencer.heldCount === 0) return;
    const dueUs = this.sequencer.clockDueUs(nowUs);
    if (dueUs === null) return;
    this.clockTimer = setTimeout(
      () => {
        // Timers run before I/O in Node's loop: lines may be waiting in the pipe. After the I/O phase
        // (setImmediate) they are pushed, and nothing the tracer printed before now is still out.
        setImmediate(() => {
          this.clockTimer = null;
          const now = monotonicNowUs();
          this.feed(this.sequencer.releaseByClock(now));
          this.armClockRelease(now);
        });
      },
      Math.max(1, Math.ceil((dueUs - nowUs) / 1000)),
    );
    this.clockTimer.unref();
  }

  private disarmClockRelease(): void {
    if (this.clockTimer !== null) clearTimeout(this.clockTimer);
    this.clockTimer = null;
  }

  /**
   * bpftrace reports losses as often as every buffer read when flooded: say
   * so at once, then at most every LOST_LOG_INTERVAL_MS with the sum, so a
   * flood is loud in the log without drowning it (totals: /healthz, /metrics).
   */
  private reportLost(count: number): void {
    this.lostUnlogged += count;
    const now = Date.now();
    if (now - this.lostLoggedAt < LOST_LOG_INTERVAL_MS) return;
    this.log.warn({ lost: this.lostUnlogged }, 'bpftrace lost records: calls may be missing or incomplete');
    this.lostUnlogged = 0;
    this.lostLoggedAt = now;
  }

  private feed(records: readonly TracerRecord[]): void {
    const now = Date.now();
    for (const rec of records) {
      if ('ts' in rec && rec.ts > this.releasedTs) this.releasedTs = rec.ts;
      const events = this.assembler.push(rec, now);
      if (events.length > 0) this.callbacks.emit(events);
    }
  }
}

export function describeExit(exit: TracerExit): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const said = exit.stderrTail.filter((l) => /error/i.test(l)).slice(-3).join(' | ');
  return said ? `bpftrace ${how}: ${said}` : `bpftrace ${how}`;
}
