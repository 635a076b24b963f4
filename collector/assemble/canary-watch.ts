/**
 * The collector's own canary seen through the tracer: its exec is no call,
 * and what it reads and writes goes nowhere (the framer checked its one
 * write against the known payload: collector/tracer/record-framer.ts).
 */

/** Canary processes remembered (their exec seen, their exit not yet): a bound, should exits be lost. */
const CANARY_PIDS_MAX = 64;

export class CanaryWatch {
  /** Canary processes whose exec was seen: their records are no call's. */
  private readonly pids = new Set<number>();

  remember(pid: number): void {
    this.pids.add(pid);
    if (this.pids.size > CANARY_PIDS_MAX) this.pids.delete(this.pids.values().next().value!);
  }

  has(pid: number): boolean {
    return this.pids.has(pid);
  }

  /** The canary exited: whether `pid` was one. */
  exited(pid: number): boolean {
    return this.pids.delete(pid);
  }
}
