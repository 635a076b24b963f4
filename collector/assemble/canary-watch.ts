/**
 * The collector's own canary seen through the tracer: its exec is no call,
 * and in full mode its one write to stdout is checked byte for byte against
 * what it is known to write (whether the payload probes read the right
 * bytes).
 */

import type { AssemblerCounters } from './assembly-context.js';
import type { IoInFlight } from './io-in-flight.js';

/** Env value of CNI_COMMAND that marks the collector's own readiness probe, never a call. */
export const CANARY_COMMAND = '__cnirec_canary__';
/** What the canary writes to its stdout (one write): the known payload full mode's probes must see. */
export const CANARY_OUTPUT = 'cnirec-canary-payload\n';
/** Canary processes remembered (their exec seen, their exit not yet): a bound, should exits be lost. */
const CANARY_PIDS_MAX = 64;

export class CanaryWatch {
  /** Canary processes whose exec was seen: their write is checked, not filed. */
  private readonly pids = new Set<number>();

  constructor(private readonly counters: AssemblerCounters) {}

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

  /** A canary's read or write: its write to stdout is the known payload, checked byte for byte. */
  check(io: IoInFlight): void {
    if (io.kind !== 'write' || io.fd !== 1) return;
    const expected = Buffer.from(CANARY_OUTPUT);
    if (!io.uncaptured && io.buf.complete() && io.buf.length === expected.length && io.buf.bytes().equals(expected)) this.counters.canaryPayloads++;
    else this.counters.canaryPayloadMismatches++;
  }
}
