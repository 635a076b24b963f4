/**
 * One run of the tracer: a bpftrace process, its lines parsed and handed on
 * with the run's id, and the wait for its proof that it records (it has said
 * hello, so all its probes are attached, and then seen the collector's canary
 * exec: its framer keeps the proof, record-framer.ts).
 * The collector runs two at a time (the main tracer and a sched-only
 * standby), three for a while after a capture mode switch; their records
 * meet in one pipeline (collector/record-pipeline.ts).
 */

import type { Logger } from 'pino';
import { runCanary } from './canary.js';
import type { CanaryProof } from './record-framer.js';
import { startTracer, type RunningTracer, type TracerExit, type TracerSettings } from './tracer-process.js';
import { parseTracerLine, type PayloadPath, type TracerLineError } from '../../bpf/index.js';

const HELLO = 72; // 'H'
const LOST = 76; // 'L' of "Lost N events" (an L line, a netlink request, has a space after it)
const LOST_O = 111; // 'o'
const SPACE = 32;
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

/** The payload probes a new full-mode run uses: at syscall exit unless this kernel was found to misread them. */
export function defaultPayloadPath(): PayloadPath {
  return exitProbeVerdict === 'misreads' ? 'syscall-entry' : 'syscall-exit';
}

/** Whether a full-mode run with `path` must prove its probes read right first (once per daemon). */
export function needsPayloadCheck(path: PayloadPath | null): boolean {
  return path === 'syscall-exit' && exitProbeVerdict === null;
}

export function recordPayloadVerdict(ok: boolean): void {
  exitProbeVerdict = ok ? 'ok' : 'misreads';
}
/** One budget for every run: the main tracer and the standby lose records in the same flood. */
const lostLog = { unlogged: 0, loggedAt: 0 };

export class TracerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TracerStartError';
  }
}

export interface RunCallbacks {
  /** One line, in the order bpftrace printed it: into the record path, which says why it is malformed, or null. */
  onLine(line: Buffer, src: number): TracerLineError | null;
  /** What this run's lines have proved so far (its framer's canary checks). */
  canaryProof(src: number): CanaryProof;
  /** bpftrace ended; what it printed before may still be read (onExit follows). */
  onGone(unexpected: boolean): void;
  /** bpftrace went away and all its output has been read; `unexpected` when it was not asked to. */
  onExit(exit: TracerExit, unexpected: boolean): void;
}

export class TracerRun {
  malformedLines = 0;
  /** Records bpftrace said it lost. */
  lostEvents = 0;
  readonly startedAt = Date.now();
  private tracer: RunningTracer | null = null;
  private isReady = false;
  private stopping = false;
  private helloSeen = false;

  constructor(
    /** Names this run's records in the pipeline: unique for the daemon's life. */
    readonly id: number,
    readonly settings: TracerSettings,
    private readonly callbacks: RunCallbacks,
    private readonly log: Logger,
  ) {}

  /** Full mode's payload probes in this run (`syscall-exit`, or the `syscall-entry` fallback); null in light mode. */
  get payloadPath(): PayloadPath | null {
    return this.settings.mode === 'full' ? (this.settings.payloadPath ?? 'syscall-exit') : null;
  }

  /**
   * Runs canaries until one's write is seen with its bytes: the syscall-exit
   * probe reads a syscall's fd and buffer from where it expects the kernel to
   * have saved the user registers, and this proves it does on this kernel.
   * Why not, or null when it was seen right.
   */
  async checkPayloads(): Promise<string | null> {
    const deadline = Date.now() + PAYLOAD_CHECK_MS;
    let nextCanary = 0;
    while (this.tracer && Date.now() < deadline) {
      if (this.proof.writesRight > 0) return null;
      if (Date.now() >= nextCanary) {
        runCanary();
        nextCanary = Date.now() + 250;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (this.proof.writesRight > 0) return null;
    if (!this.tracer) return 'bpftrace stopped during the check';
    const wrong = this.proof.writesWrong;
    return wrong > 0 ? `the canary's write came with other bytes (${wrong} times)` : `no canary write was seen within ${PAYLOAD_CHECK_MS / 1000} s`;
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

  private get proof(): CanaryProof {
    return this.callbacks.canaryProof(this.id);
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
        if (this.proof.execs > 0) {
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
    const seen = this.proof.execs;
    const deadline = Date.now() + timeoutMs;
    let nextCanary = 0;
    while (this.tracer && this.proof.execs <= seen && Date.now() < deadline) {
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
    const e = this.callbacks.onLine(line, this.id);
    if (e) {
      this.malformedLines++;
      this.log.debug({ reason: e.reason, kind: e.recordKind, bytes: e.lineLength }, 'malformed tracer line');
      return;
    }
    // Its hello (BEGIN runs once every probe is attached: from now on a canary is worth running) and its losses, once each.
    if (line[0] === HELLO && line[1] === SPACE) this.helloSeen = true;
    else if (line[0] === LOST && line[1] === LOST_O) {
      const lost = parseTracerLine(line.toString('latin1'));
      if (lost.ok && lost.record.kind === 'lost') this.reportLost(lost.record.count);
    }
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
