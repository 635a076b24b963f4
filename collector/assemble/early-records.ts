/**
 * The one store for what arrives before what it belongs to, by the pid it
 * belongs to. Another CPU's buffer can deliver
 *
 * - a process's reads, writes, forks, thread ends or exit before its exec or
 *   fork (`records`: whoever learns of the process replays them,
 *   ProcessLifecycle.replayEarly);
 * - a child's exec before the exec of its traced parent (`childExecs`: taken
 *   for a call of its own, a delegate would be a top-level call);
 * - reads and writes of a forked process that no stream of its call took
 *   (its own pipes) before the exec that makes them a new call's or
 *   helper's (`kept`: counted already, at most KEPT_MAX);
 * - a mark (the tracer supplying its bytes died under it) before its exec
 *   (`lost`).
 *
 * Each waits EARLY_RECORDS_TTL_MS from its arrival, one expiry for all.
 * Given up, an exec that waited for its parent goes on without it
 * (overdueExecs); everything else is dropped and counted (sweep). A process whose kept records were
 * more than are kept has its call marked with one cause, `early-overflow`.
 */

import type { ExecFrame, TracerFrame } from '../../bpf/index.js';
import type { Proc } from './call-state.js';
import type { IoInFlight } from './io-in-flight.js';
import type { LostRecordsCause } from '../types.js';

/** How long what came early waits for what it belongs to. */
export const EARLY_RECORDS_TTL_MS = 10_000;
/** Reads and writes kept per forked process for an exec that may still come (a bound: a fork that never execs). */
const KEPT_MAX = 256;

/** A thread's end as the io tally takes it. */
export interface ThreadEnd {
  readonly tid: number;
  readonly ts: number;
  readonly ioRecords: number;
  readonly clones: number | undefined;
}

/** Records of a process whose exec or fork has not come. */
export interface EarlyRecords {
  since: number;
  ios: IoInFlight[];
  /** With their times: a fork replayed after its child exec'd and exited must still be told from a new process. A thread's clone too (`thread`). */
  forks: Array<{ pid: number; ts: number | undefined; thread?: boolean }>;
  exit: Extract<TracerFrame, { kind: 'exit' }> | null;
  /** Its threads' ends, with the payload records they printed and the tasks they cloned (added to its counts). */
  threadEnds: ThreadEnd[];
}

/** Reads and writes a forked process did that no stream of its call took, for the exec that may follow. */
export interface Kept {
  since: number;
  readonly ios: Array<{ io: IoInFlight; countedFor: Proc }>;
  overflow: boolean;
}

/** An exec waiting for its parent's, and since when (the caller's clock). */
export interface WaitingExec {
  readonly exec: ExecFrame;
  readonly since: number;
}

interface Early {
  records?: EarlyRecords;
  childExecs?: WaitingExec[];
  kept?: Kept;
  lost?: { at: number; why: LostRecordsCause };
}

export class EarlyRecordStore {
  private readonly byPid = new Map<number, Early>();

  /** The records waiting for process `pid`, made empty as of `nowMs` if none were. */
  for(pid: number, nowMs: number): EarlyRecords {
    const early = this.entry(pid);
    early.records ??= { since: nowMs, ios: [], forks: [], exit: null, threadEnds: [] };
    return early.records;
  }

  /** Whether records of `pid` wait: it is a traced process whose exec has not come. */
  has(pid: number): boolean {
    return this.byPid.get(pid)?.records !== undefined;
  }

  /** What waited for process `pid`, now known. */
  take(pid: number): EarlyRecords | undefined {
    return this.takePart(pid, 'records');
  }

  /** An exec waits for the exec of its parent `ppid`. */
  awaitParent(ppid: number, waiting: WaitingExec): void {
    (this.entry(ppid).childExecs ??= []).push(waiting);
  }

  /** The execs waiting for `ppid`'s (now known), in order of arrival. */
  takeChildExecs(ppid: number): WaitingExec[] | undefined {
    return this.takePart(ppid, 'childExecs');
  }

  /** The parents execs wait for, with the first exec waiting. */
  *awaitedParents(): IterableIterator<[number, WaitingExec]> {
    for (const [ppid, early] of this.byPid) if (early.childExecs) yield [ppid, early.childExecs[0]!];
  }

  /** A read or write of forked process `countedFor` that no stream took: kept for its exec, up to KEPT_MAX, dated from its own arrival. */
  keep(io: IoInFlight, countedFor: Proc): void {
    const early = this.entry(io.pid);
    early.kept ??= { since: io.since, ios: [], overflow: false };
    early.kept.since = Math.min(early.kept.since, io.since);
    if (early.kept.ios.length < KEPT_MAX) early.kept.ios.push({ io, countedFor });
    else early.kept.overflow = true;
  }

  /** What forked process `pid` read and wrote before its exec (now come). */
  takeKept(pid: number): Kept | undefined {
    return this.takePart(pid, 'kept');
  }

  /** Process `pid` was marked before its exec came: its call is marked when it does. */
  markLost(pid: number, why: LostRecordsCause, nowMs: number): void {
    this.entry(pid).lost = { at: nowMs, why };
  }

  /** Why the process `pid`, whose exec came now, was marked before it did, if it was. */
  takeLost(pid: number): LostRecordsCause | null {
    const early = this.byPid.get(pid);
    const lost = early?.lost;
    if (!early || !lost) return null;
    delete early.lost;
    this.tidy(pid, early);
    return lost.why;
  }

  /** Drops the records waiting for `pid` (the collector's own canary: no call). */
  drop(pid: number): void {
    const early = this.byPid.get(pid);
    if (!early) return;
    delete early.records;
    this.tidy(pid, early);
  }

  /**
   * The execs that waited EARLY_RECORDS_TTL_MS for their parent's, as of
   * `nowMs`: they go on without it (first: what waited for them goes on with
   * them, before the sweep drops what is as old).
   */
  overdueExecs(nowMs: number): WaitingExec[] {
    const out: WaitingExec[] = [];
    for (const [pid, early] of this.byPid) {
      if (!early.childExecs || nowMs - early.childExecs[0]!.since < EARLY_RECORDS_TTL_MS) continue;
      out.push(...early.childExecs);
      delete early.childExecs;
      this.tidy(pid, early);
    }
    return out;
  }

  /**
   * Drops what else waited EARLY_RECORDS_TTL_MS as of `nowMs` (but the
   * records of a process whose exec still waits for its parent's: they go on
   * with it); returns how many records that was.
   */
  sweep(nowMs: number): number {
    let dropped = 0;
    const waitingExecs = new Set<number>();
    for (const early of this.byPid.values()) if (early.childExecs) for (const w of early.childExecs) waitingExecs.add(w.exec.pid);
    for (const [pid, early] of this.byPid) {
      if (early.records && nowMs - early.records.since >= EARLY_RECORDS_TTL_MS && !waitingExecs.has(pid)) {
        dropped += count(early.records);
        delete early.records;
      }
      if (early.kept && nowMs - early.kept.since >= EARLY_RECORDS_TTL_MS) delete early.kept;
      if (early.lost && nowMs - early.lost.at >= EARLY_RECORDS_TTL_MS) delete early.lost;
      this.tidy(pid, early);
    }
    return dropped;
  }

  /** How many records wait for their process (kept reads and writes among them). */
  count(): number {
    let n = 0;
    for (const e of this.byPid.values()) n += (e.records ? count(e.records) : 0) + (e.kept?.ios.length ?? 0);
    return n;
  }

  /** Execs waiting for their parent. */
  get awaitingParents(): number {
    let n = 0;
    for (const e of this.byPid.values()) if (e.childExecs) n++;
    return n;
  }

  clear(): void {
    this.byPid.clear();
  }

  private entry(pid: number): Early {
    let early = this.byPid.get(pid);
    if (!early) {
      early = {};
      this.byPid.set(pid, early);
    }
    return early;
  }

  /** One kind of what waits for `pid`, taken out (the entry goes when nothing else waits). */
  private takePart<K extends 'records' | 'childExecs' | 'kept'>(pid: number, part: K): Early[K] | undefined {
    const early = this.byPid.get(pid);
    const taken = early?.[part];
    if (early && taken !== undefined) {
      delete early[part];
      this.tidy(pid, early);
    }
    return taken;
  }

  private tidy(pid: number, early: Early): void {
    if (!early.records && !early.childExecs && !early.kept && !early.lost) this.byPid.delete(pid);
  }
}

function count(early: EarlyRecords): number {
  return early.ios.length + early.forks.length + early.threadEnds.length + (early.exit ? 1 : 0);
}
