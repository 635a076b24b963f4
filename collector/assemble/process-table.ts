/**
 * The processes the assembler follows, by pid: plugins, their helpers and
 * forks, live or exited but part of a call still open, and the lookups over
 * them (the process a pid named at a time, whether a call's tree still
 * runs). Plain data: what a fork, exec or exit means is decided elsewhere.
 */

import type { CallState, Proc } from './call-state.js';

/**
 * How long a helper still running when its call was published stays
 * followed. Its records change nothing published any more; it is kept only
 * so that what it runs next is not taken for a runtime's call. Past this
 * (its exit lost, or a daemon it became) it is forgotten.
 */
export const OUTLIVED_TTL_MS = 60_000;

export class ProcessTable {
  private readonly procs = new Map<number, Proc>();
  /** Helpers and forks that outlived their call's publication, and since when. */
  private readonly outlived = new Map<number, { proc: Proc; since: number }>();

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

  /** Forgets processes that outlived their call by OUTLIVED_TTL_MS. */
  sweepOutlived(nowMs: number): void {
    for (const [pid, o] of this.outlived) {
      if (nowMs - o.since < OUTLIVED_TTL_MS) continue;
      this.outlived.delete(pid);
      if (this.procs.get(pid) === o.proc) this.procs.delete(pid);
    }
  }

  clear(): void {
    this.procs.clear();
    this.outlived.clear();
  }
}
