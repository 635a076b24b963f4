/**
 * One run of the tracer: a bpftrace process, its lines parsed and handed on
 * with the run's id, and the proof that it records (it has said hello, so
 * all its probes are attached, and then seen the collector's canary exec).
 * The collector runs two at a time (the main tracer and a sched-only
 * standby), three for a while after a capture mode switch; their records
 * meet in one pipeline (collector/record-pipeline.ts).
 */

import type { Logger } from 'pino';
import { isOwnCanary, runCanary } from './canary.js';
import { startTracer, type RunningTracer, type TracerExit, type TracerSettings } from './tracer-process.js';
import { parseTracerBytes, type TracerRecord } from '../../bpf/index.js';

/** Lost records are logged at most this often (summed), however often bpftrace reports them. */
const LOST_LOG_INTERVAL_MS = 10_000;
/** One budget for every run: the main tracer and the standby lose records in the same flood. */
const lostLog = { unlogged: 0, loggedAt: 0 };

export class TracerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TracerStartError';
  }
}

export interface RunCallbacks {
  /** One parsed record, in the order bpftrace printed it. */
  onRecord(rec: TracerRecord, src: number): void;
  /** bpftrace ended; what it printed before may still be read (onExit follows). */
  onGone(unexpected: boolean): void;
  /** bpftrace went away and all its output has been read; `unexpected` when it was not asked to. */
  onExit(exit: TracerExit, unexpected: boolean): void;
}

export class TracerRun {
  malformedLines = 0;
  /** Records bpftrace said it lost. */
  lostEvents = 0;
  lastRecordAt: number | null = null;
  readonly startedAt = Date.now();
  private tracer: RunningTracer | null = null;
  private isReady = false;
  private stopping = false;
  private helloSeen = false;
  /** Canary execs seen after the hello. */
  private canaries = 0;

  constructor(
    /** Names this run's records in the pipeline: unique for the daemon's life. */
    readonly id: number,
    readonly settings: TracerSettings,
    private readonly callbacks: RunCallbacks,
    private readonly log: Logger,
  ) {}

  get running(): boolean {
    return this.tracer !== null;
  }

  get ready(): boolean {
    return this.isReady;
  }

  get pid(): number | null {
    return this.tracer?.pid ?? null;
  }

  /** Starts bpftrace; resolves once it has recorded the canary exec. */
  start(readyTimeoutMs: number): Promise<void> {
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
        if (this.canaries > 0) {
          this.isReady = true;
          settle();
        } else if (this.helloSeen) {
          runCanary();
        }
      }, 100);
      const timeout = setTimeout(
        () => settle(new TracerStartError(`bpftrace did not start recording within ${readyTimeoutMs / 1000} s`)),
        readyTimeoutMs,
      );
      this.tracer = startTracer(
        this.settings,
        {
          onLine: (line) => this.onLine(line),
          onOverlongLine: () => {
            this.malformedLines++;
          },
          onProcessGone: () => this.callbacks.onGone(!this.stopping),
          onExit: (exit) => {
            this.tracer = null;
            this.isReady = false;
            if (!settled) settle(new TracerStartError(describeExit(exit)));
            this.callbacks.onExit(exit, !this.stopping);
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
    const seen = this.canaries;
    const deadline = Date.now() + timeoutMs;
    let nextCanary = 0;
    while (this.tracer && this.canaries <= seen && Date.now() < deadline) {
      if (Date.now() >= nextCanary) {
        runCanary();
        nextCanary = Date.now() + 200;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Stops bpftrace (SIGTERM, then SIGKILL). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.tracer?.stop();
  }

  /** SIGKILLs bpftrace at once (synchronous): the process is about to end. */
  killNow(): void {
    this.stopping = true;
    this.tracer?.killNow();
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
    switch (rec.kind) {
      case 'hello':
        // BEGIN runs once every probe is attached: from now on a canary proves the whole program records.
        this.helloSeen = true;
        break;
      case 'exec':
        if (this.helloSeen && isOwnCanary(rec.pid, rec.ppid)) this.canaries++;
        break;
      case 'lost':
        this.reportLost(rec.count);
        break;
    }
    this.callbacks.onRecord(rec, this.id);
  }

  /**
   * bpftrace reports losses as often as every buffer read when flooded: say
   * so at once, then at most every LOST_LOG_INTERVAL_MS with the sum, so a
   * flood is loud in the log without drowning it (totals: /healthz, /metrics).
   */
  private reportLost(count: number): void {
    this.lostEvents += count;
    lostLog.unlogged += count;
    const now = Date.now();
    if (now - lostLog.loggedAt < LOST_LOG_INTERVAL_MS) return;
    this.log.warn({ lost: lostLog.unlogged }, 'bpftrace lost records: calls may be missing or incomplete');
    lostLog.unlogged = 0;
    lostLog.loggedAt = now;
  }
}

export function describeExit(exit: TracerExit): string {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  const said = exit.stderrTail.filter((l) => /error/i.test(l)).slice(-3).join(' | ');
  return said ? `bpftrace ${how}: ${said}` : `bpftrace ${how}` ;
}
