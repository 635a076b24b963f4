/**
 * Records about a process whose exec (or fork) has not arrived yet: another
 * CPU's buffer can deliver a process's reads, writes, forks or exit before
 * its exec. They wait here, per pid, for EARLY_RECORDS_TTL_MS; whoever
 * learns of the process takes them (see ProcessLifecycle.replayEarly).
 */

import type { IoInFlight } from './io-in-flight.js';
import type { TracerFrame } from '../../bpf/index.js';

/** How long records may wait for the exec or fork of their process. */
export const EARLY_RECORDS_TTL_MS = 10_000;

export interface EarlyRecords {
  since: number;
  ios: IoInFlight[];
  /** With their times: a fork replayed after its child exec'd and exited must still be told from a new process. A thread's clone too (`thread`). */
  forks: Array<{ pid: number; ts: number | undefined; thread?: boolean }>;
  exit: Extract<TracerFrame, { kind: 'exit' }> | null;
  /** Its threads' ends, with the payload records they printed and the tasks they cloned (added to its counts). */
  threadEnds: ThreadEnd[];
}

/** A thread's end as the io tally takes it. */
export interface ThreadEnd {
  readonly tid: number;
  readonly ts: number;
  readonly ioRecords: number;
  readonly clones: number | undefined;
}

export class EarlyRecordStore {
  private readonly byPid = new Map<number, EarlyRecords>();

  /** The records waiting for process `pid`, made empty as of `nowMs` if none were. */
  for(pid: number, nowMs: number): EarlyRecords {
    let early = this.byPid.get(pid);
    if (!early) {
      early = { since: nowMs, ios: [], forks: [], exit: null, threadEnds: [] };
      this.byPid.set(pid, early);
    }
    return early;
  }

  /** Whether records of `pid` wait: it is a traced process whose exec has not come. */
  has(pid: number): boolean {
    return this.byPid.has(pid);
  }

  /** Drops what waits for `pid` (the collector's own canary: no call). */
  drop(pid: number): void {
    this.byPid.delete(pid);
  }

  /** What waited for `pid`, now known. */
  take(pid: number): EarlyRecords | undefined {
    const early = this.byPid.get(pid);
    if (early) this.byPid.delete(pid);
    return early;
  }

  /** Drops what waited EARLY_RECORDS_TTL_MS; returns how many records that was. */
  sweep(nowMs: number): number {
    let dropped = 0;
    for (const [pid, early] of this.byPid) {
      if (nowMs - early.since < EARLY_RECORDS_TTL_MS) continue;
      this.byPid.delete(pid);
      dropped += count(early);
    }
    return dropped;
  }

  /** How many records wait. */
  count(): number {
    let n = 0;
    for (const e of this.byPid.values()) n += count(e);
    return n;
  }
}

function count(early: EarlyRecords): number {
  return early.ios.length + early.forks.length + early.threadEnds.length + (early.exit ? 1 : 0);
}
