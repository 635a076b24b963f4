/**
 * Whether every payload record of a process has come in. The tracer counts
 * the payload records (reads, writes, uncaptured bytes, fd copies) per
 * thread, exactly: the exit record carries the leader's count, each thread's
 * end record its thread's, before or after the exit. Those records may trail
 * the ends, as bpftrace drains one CPU's buffer at a time and an end can come
 * through another. A call is held until its processes' counts are met,
 * instead of for a fixed grace period that a CPU buffer drained late
 * outlasts.
 *
 * A process's count is the sum of what its ends announced, each end once
 * (an end seen twice is not counted twice). Its children are announced the
 * same way: each end says how many tasks that thread (the exit: the leader)
 * cloned, so the process's fork records are awaited until that many came,
 * and through them the ends of its threads, however late they come (a thread
 * whose clone, records and end all come through a CPU buffer read after the
 * exit's would otherwise be unknown when the call goes out; a child process,
 * once known, is a descendant its call waits for).
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
  /** Per process, the fork records seen of it (of threads apart). */
  private readonly cloned = new Map<P, { tasks: number; threads: number }>();
  /** Per process, what each of its ends announced: its exit's ('exit'), each thread's (by tid and time): payload records and clones. */
  private readonly announced = new Map<P, Map<string, { records: number; clones: number }>>();

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

  /** A fork record of process `pid` came in: a child process, or (`thread`) a thread of its own. */
  clone(pid: P, thread: boolean, nowMs: number): void {
    this.touch(pid, nowMs);
    const c = this.cloned.get(pid);
    if (c) {
      c.tasks++;
      if (thread) c.threads++;
    } else {
      this.cloned.set(pid, { tasks: 1, threads: thread ? 1 : 0 });
    }
  }

  /**
   * Process `pid` exited, its tracer having printed `printed` payload records
   * for its leader, which cloned `clones` tasks (undefined: not said).
   */
  exited(pid: P, printed: number | undefined, clones: number | undefined, nowMs: number): void {
    this.announce(pid, 'exit', printed, clones, nowMs);
  }

  /** Thread `tid` of process `pid` ended at `ts`, its tracer having printed `ioRecords` payload records for it, which cloned `clones` tasks. */
  threadEnded(pid: P, end: { tid: number; ts: number; ioRecords: number; clones: number | undefined }, nowMs: number): void {
    this.announce(pid, `t${end.tid}:${end.ts}`, end.ioRecords, end.clones, nowMs);
  }

  /**
   * How many of the records its ends announced have not come yet, with its
   * fork records not yet seen and the ends of its threads not yet seen.
   */
  missing(pid: P): number {
    const ends = this.announced.get(pid);
    if (ends === undefined) return 0;
    let want = 0;
    let clones = 0;
    for (const n of ends.values()) {
      want += n.records;
      clones += n.clones;
    }
    const seen = this.cloned.get(pid);
    // Its threads' ends: one per thread cloned (but the exit, which is the leader's).
    const threadEnds = ends.size - (ends.has('exit') ? 1 : 0);
    return Math.max(0, want - this.count(pid)) + Math.max(0, clones - (seen?.tasks ?? 0)) + Math.max(0, (seen?.threads ?? 0) - threadEnds);
  }

  /** The process is done with (its call published): a new process with its pid starts from nothing. */
  forget(pid: P): void {
    this.seen.delete(pid);
    this.cloned.delete(pid);
    this.announced.delete(pid);
  }

  /** Drops counts of processes whose exit never came (lost), so the tally stays bounded. */
  sweep(nowMs: number): void {
    for (const [pid, s] of this.seen) if (nowMs - s.atMs >= FORGET_MS) this.forget(pid);
  }

  clear(): void {
    this.seen.clear();
    this.cloned.clear();
    this.announced.clear();
  }

  get size(): number {
    return this.seen.size;
  }

  /** The processes whose ends announced records that have not all come. */
  *waiting(): IterableIterator<P> {
    for (const pid of this.announced.keys()) if (this.missing(pid) > 0) yield pid;
  }

  private announce(pid: P, end: string, printed: number | undefined, clones: number | undefined, nowMs: number): void {
    if (printed === undefined) return;
    let ends = this.announced.get(pid);
    if (ends === undefined) {
      ends = new Map();
      this.announced.set(pid, ends);
    }
    ends.set(end, { records: printed, clones: clones ?? 0 });
    this.touch(pid, nowMs);
  }

  /** Dated now: swept with its records when none come for long (sweep). */
  private touch(pid: P, nowMs: number): void {
    const s = this.seen.get(pid);
    if (s) s.atMs = nowMs;
    else this.seen.set(pid, { n: 0, atMs: nowMs });
  }

  private count(pid: P): number {
    return this.seen.get(pid)?.n ?? 0;
  }
}
