/**
 * The one process table of the record path: the processes the calls are
 * followed through, by pid — plugins, their helpers and forks, live or
 * exited but part of a call still open, and those that exited with their
 * call published, remembered a while for what comes late of them — with the
 * tracer each one's tree takes its payloads from (the payload epochs: which
 * tracer, and which capture mode, a tree starting at a moment gets).
 *
 * The assembler writes it (what a fork, exec or exit means is decided
 * there); the merger, a stage before, reads it to take each tree's payloads
 * from one tracer. Both see it as the frames before the current one left it.
 * Plain data: no clock of its own.
 */

import type { CaptureMode } from '../../bpf/index.js';
import type { CallState, Proc } from './call-state.js';

/**
 * How long a helper still running when its call was published stays
 * followed. Its records change nothing published any more; it is kept only
 * so that what it runs next is not taken for a runtime's call. Past this
 * (its exit lost, or a daemon it became) it is forgotten.
 */
export const OUTLIVED_TTL_MS = 60_000;
/**
 * How long an exited process whose call is published is remembered: well
 * past the longest a record lags behind (its late reads and writes still go
 * into its call, its tree still takes payloads from its tracer).
 */
export const REMEMBER_EXITED_MS = 60_000;

/** From `fromTs` (kernel µs) on, trees that start take their payloads from `src` (null: none) and are recorded in `mode`. */
export interface PayloadEpoch {
  readonly fromTs: number;
  readonly src: number | null;
  readonly mode: CaptureMode;
}

export class ProcessTable {
  private readonly procs = new Map<number, Proc>();
  /** Helpers and forks that outlived their call's publication, and since when. */
  private readonly outlived = new Map<number, { proc: Proc; since: number }>();
  /** Exited processes whose call was published, by pid (the last of each), and since when. */
  private readonly exited = new Map<number, { proc: Proc; since: number }>();
  private epochs: PayloadEpoch[];

  constructor(initial: { src: number | null; mode: CaptureMode } = { src: null, mode: 'full' }) {
    this.epochs = [{ fromTs: 0, src: initial.src, mode: initial.mode }];
  }

  get size(): number {
    return this.procs.size;
  }

  get(pid: number): Proc | undefined {
    return this.procs.get(pid);
  }

  has(pid: number): boolean {
    return this.procs.has(pid);
  }

  set(proc: Proc): void {
    this.procs.set(proc.pid, proc);
  }

  delete(pid: number): void {
    this.procs.delete(pid);
  }

  /**
   * The process `pid` named at `ts` (kernel µs), as far as known: not one
   * whose exit came before it (the pid's next process, whose exec or fork is
   * still in a CPU buffer read later, made that record).
   */
  at(pid: number, ts: number | undefined): Proc | undefined {
    const proc = this.procs.get(pid);
    if (proc && ts !== undefined && proc.exited && proc.exitTs !== undefined && proc.exitTs < ts) return undefined;
    return proc;
  }

  /** Whether the parent a fork record named is still followed and alive (else the child was re-parented). */
  parentLives(proc: Proc): boolean {
    const parent = this.procs.get(proc.ppid);
    return parent !== undefined && !parent.exited;
  }

  /** Whether a process of this call, other than its plugin, still runs. */
  hasLiveDescendant(id: string, call: CallState): boolean {
    for (const pid of call.pids) {
      const proc = this.procs.get(pid);
      if (proc && proc.callId === id && !proc.exited && pid !== call.base.pid) return true;
    }
    return false;
  }

  /** Every live process followed. */
  livePids(): number[] {
    const out: number[] = [];
    for (const proc of this.procs.values()) if (!proc.exited) out.push(proc.pid);
    return out;
  }

  /** A helper or fork still running when its call was published. */
  outlive(proc: Proc, nowMs: number): void {
    this.outlived.set(proc.pid, { proc, since: nowMs });
  }

  /** It ended (or was a thread): nothing to forget it for any more. */
  forgetOutlived(pid: number): void {
    this.outlived.delete(pid);
  }

  /** An exited process of a published call, followed no more: remembered for what comes late of it. */
  remember(proc: Proc, nowMs: number): void {
    this.exited.delete(proc.pid);
    this.exited.set(proc.pid, { proc, since: nowMs });
  }

  /** The exited process `pid` of a published call, remembered. */
  remembered(pid: number): Proc | undefined {
    return this.exited.get(pid)?.proc;
  }

  /** Remembered no more: it is followed again (its exec came after its exit). */
  unremember(pid: number): void {
    this.exited.delete(pid);
  }

  /** Forgets processes that outlived their call by OUTLIVED_TTL_MS, and exited ones remembered REMEMBER_EXITED_MS. */
  sweep(nowMs: number): void {
    for (const [pid, o] of this.outlived) {
      if (nowMs - o.since < OUTLIVED_TTL_MS) continue;
      this.outlived.delete(pid);
      if (this.procs.get(pid) === o.proc) this.procs.delete(pid);
    }
    for (const [pid, e] of this.exited) {
      if (nowMs - e.since < REMEMBER_EXITED_MS) break;
      this.exited.delete(pid);
    }
  }

  clear(): void {
    this.procs.clear();
    this.outlived.clear();
    this.exited.clear();
  }

  /**
   * From `fromTs` (kernel µs) on, trees that start take their payloads from
   * tracer `src` (null: none), and new calls are recorded in `mode`.
   */
  setPayloadSource(src: number | null, mode: CaptureMode, fromTs: number): void {
    this.epochs.push({ fromTs, src, mode });
  }

  /** From `fromTs` on, new calls are recorded in `mode` (a tracer said so: its hello), their payloads from the same tracer. */
  setMode(mode: CaptureMode, fromTs: number): void {
    this.epochs.push({ fromTs, src: this.epochAt(fromTs).src, mode });
  }

  /** The payload source and capture mode of trees that start at `ts`. */
  epochAt(ts: number): PayloadEpoch {
    let found = this.epochs[0]!;
    for (const e of this.epochs) if (e.fromTs <= ts) found = e;
    return found;
  }

  /** Forgets the epochs no tree can start in any more: a later one began before `beforeTs`. */
  forgetEpochs(beforeTs: number): void {
    let drop = 0;
    while (drop + 1 < this.epochs.length && this.epochs[drop + 1]!.fromTs < beforeTs) drop++;
    if (drop > 0) this.epochs = this.epochs.slice(drop);
  }

  /**
   * The tracer the payloads of process `pid`, at `ts`, come from: its tree's
   * (the process, followed or remembered), or, for a process not known (yet),
   * that of a tree starting at `ts`.
   */
  payloadSourceOf(pid: number, ts: number): number | null {
    const proc = this.at(pid, ts) ?? this.rememberedAt(pid, ts);
    return proc ? proc.payloadSrc : this.epochAt(ts).src;
  }

  /** The processes whose trees take their payloads from tracer `src`: followed, and remembered. */
  *fedBy(src: number): IterableIterator<Proc> {
    for (const proc of this.procs.values()) if (proc.payloadSrc === src) yield proc;
    for (const { proc } of this.exited.values()) if (proc.payloadSrc === src && this.procs.get(proc.pid) !== proc) yield proc;
  }

  /** A remembered process that `pid` named at `ts`: exited at or after it. */
  private rememberedAt(pid: number, ts: number): Proc | undefined {
    const proc = this.exited.get(pid)?.proc;
    return proc && (proc.exitTs === undefined || proc.exitTs >= ts) ? proc : undefined;
  }
}
