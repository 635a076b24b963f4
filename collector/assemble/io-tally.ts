/**
 * Whether every payload record of a process has come in. The tracer's exit
 * record says how many read, write and uncaptured headers the process's
 * threads printed; those may trail the exit, as bpftrace drains one CPU's
 * buffer at a time and the exit can come through another. A call is held
 * until its processes' counts are met, instead of for a fixed grace period
 * that a CPU buffer drained late outlasts.
 *
 * The tracer's count is a lower bound (two threads printing at once may
 * count once), so a tally is never waited on for more than was printed.
 *
 * Kept per process (the assembler's entry for it), not per pid: a pid is
 * reused, and the exec of the next process with it must not wipe what the
 * call of the last one still waits for.
 *
 * Pure: the caller passes the time.
 */

/** How long a count no longer being updated is kept: its process's exit, which would clear it, was lost. */
const FORGET_MS = 120_000;

export class IoTally<P> {
  private readonly seen = new Map<P, { n: number; atMs: number }>();
  private readonly expected = new Map<P, number>();

  /** A payload record of process `pid` came in. */
  record(pid: P, nowMs: number): void {
    const s = this.seen.get(pid);
    if (s) {
      s.n++;
      s.atMs = nowMs;
    } else {
      this.seen.set(pid, { n: 1, atMs: nowMs });
    }
  }

  /** A record counted for `pid` was another process's after all. */
  uncount(pid: P): void {
    const s = this.seen.get(pid);
    if (s && s.n > 0) s.n--;
  }

  /** Process `pid` exited, its tracer having printed `printed` payload records for it (undefined: not said). */
  exited(pid: P, printed: number | undefined, nowMs: number): void {
    if (printed === undefined || printed <= this.count(pid)) return;
    this.expected.set(pid, printed);
    if (!this.seen.has(pid)) this.seen.set(pid, { n: 0, atMs: nowMs });
  }

  /** How many of the records its exit announced have not come yet. */
  missing(pid: P): number {
    const want = this.expected.get(pid);
    return want === undefined ? 0 : Math.max(0, want - this.count(pid));
  }

  /** The process is done with (its call published): a new process with its pid starts from nothing. */
  forget(pid: P): void {
    this.seen.delete(pid);
    this.expected.delete(pid);
  }

  /** Drops counts of processes whose exit never came (lost), so the tally stays bounded. */
  sweep(nowMs: number): void {
    for (const [pid, s] of this.seen) if (nowMs - s.atMs >= FORGET_MS) this.forget(pid);
  }

  clear(): void {
    this.seen.clear();
    this.expected.clear();
  }

  get size(): number {
    return this.seen.size;
  }

  /** The processes whose exit announced records that have not all come. */
  *waiting(): IterableIterator<P> {
    for (const pid of this.expected.keys()) if (this.missing(pid) > 0) yield pid;
  }

  private count(pid: P): number {
    return this.seen.get(pid)?.n ?? 0;
  }
}
