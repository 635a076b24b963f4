/**
 * Merges the records of several tracers into the one stream the call
 * assembler reads, so a call is one call however many tracers saw it.
 *
 * Two tracers run at once: the main one and a sched-only standby (so one
 * covers the other's restart), and two main ones for a while after a capture
 * mode switch. All of them see the same execs, forks and exits; each is
 * passed on once:
 *
 * - an exec is the same exec when pid, process start time (a kernel value,
 *   identical in every tracer) and path agree;
 * - a fork, by parent and child pid;
 * - an exit, by pid and start time (a process exits once);
 * - a thread's end, by tid and the thread's start time;
 *
 * and the timestamps lie within SAME_EVENT_US (each program reads the clock
 * itself: microseconds apart, or milliseconds when one is preempted).
 *
 * Payloads (reads, writes) cannot be matched that way (a thread's writes
 * may follow one another within microseconds with the same length), so each
 * process tree takes its payloads from one tracer: the payload tracer when
 * its top-level process started. That is what the process table says of
 * each process (assemble/process-table.ts, the assembler's, read here: each
 * frame is assembled before the next is merged), and of a process not known
 * yet, its payload epochs. A tree that started before a switch keeps the old
 * tracer's bytes until it ends; one that started after takes the new one's.
 * A tree whose payload tracer died gets no more bytes, and its processes'
 * exits are reported as cut (their calls are marked lostRecords).
 *
 * The tracers' own hellos are dropped (the standby's would say light): the
 * capture mode new calls are recorded in is the payload epochs'.
 *
 * Pure: frames come in time order (the shared RecordSequencer's output)
 * with their source; times are the frames' own.
 */

import type { ProcessTable } from '../assemble/index.js';
import type { TracerFrame } from '../../bpf/index.js';

/** An exit or a thread's end: it says how many payload records its process (its leader) or thread printed. */
type CountedEnd = Extract<TracerFrame, { kind: 'exit' | 'thread-exit' }>;

/** An end whose counts (payload records, thread clones) are not the payload tracer's: nothing to wait for. */
function withoutIoCount(rec: CountedEnd): CountedEnd {
  if (rec.ioRecords === undefined && rec.clones === undefined) return rec;
  const copy = { ...rec };
  delete copy.ioRecords;
  delete copy.clones;
  return copy;
}

/**
 * How far apart (kernel µs) two tracers may date one event: their programs
 * run one after the other on the same tracepoint hit, microseconds apart, but
 * a program can be preempted between them on a busy node (copies of one
 * thread end were dated more than 2 ms apart there; unmatched, the standby's
 * copy was held for a payload tracer's copy that had already gone on). An
 * event's key names it, so two copies from two tracers within a second are
 * one event; of several, the nearest in time.
 */
const SAME_EVENT_US = 1_000_000;
/** How far back (kernel µs) a dead tracer's bytes may have been left unread: more than bpftrace's reads lag behind. */
const CUT_WINDOW_US = 1_000_000;
/**
 * How long (µs of the clock) an end another tracer reported first waits at
 * most for the payload tracer's copy, should that tracer neither print it,
 * nor lose records, nor die: a copy is lost only with a loss notice (its
 * tracer says so) or with its tracer. The payload tracer lags behind the
 * sched-only standby under load by seconds, one CPU buffer more than
 * another: waiting until it had printed 5 s past the end expired copies that
 * were still in a buffer read later, and marked whole calls cut.
 */
const HELD_END_MAX_US = 30_000_000;
/** Sightings are forgotten this far (kernel µs) behind the newest record: a lagging tracer's copy arrives well within it. */
const REMEMBER_US = 60_000_000;

/** One kernel event and the tracers that reported it. */
interface Sighting {
  readonly ts: number;
  readonly srcs: number[];
}

export interface MergerCounters {
  /** Execs, forks and exits seen by more than one tracer and passed on once. */
  duplicates: number;
  /** Reads and writes dropped because another tracer supplies that process's bytes. */
  payloadsFromOther: number;
}

export class RecordMerger {
  readonly counters: MergerCounters = { duplicates: 0, payloadsFromOther: 0 };
  private readonly sightings = new Map<string, Sighting[]>();
  /** Sighting keys in the order they were added (by timestamp, near enough), for forgetting. */
  private readonly sightingOrder: Array<{ key: string; ts: number }> = [];
  private sightingHead = 0;
  /** Tracers gone for good: the trees they supplied get bytes from no one. */
  private readonly dead = new Set<number>();
  /**
   * Exits and thread ends another tracer reported first, waiting for the
   * payload tracer's own copy: it carries the count of payload records to
   * wait for (a sched-only standby's has none: passed on first, it would let
   * the call be published before the records it did not count came). Only
   * then is it known whether the bytes all arrived, or whether that tracer
   * died with them unread (and the call must say so before it is published).
   */
  private readonly heldEnds = new Map<string, { rec: CountedEnd & { ts: number; pid: number }; owner: number; heldAtUs: number }>();
  private maxTs = 0;
  private forgottenAt = 0;

  constructor(private readonly procs: ProcessTable) {}

  /**
   * A tracer is gone for good (stopped or died): trees it supplied bytes for
   * get none from anyone else. Returns the processes whose bytes it may not
   * have printed: those still running, and those that exited within
   * CUT_WINDOW_US of its last records (bpftrace reads one CPU's buffer at a
   * time: an exit read from one does not mean the writes in another were).
   * Their calls' payloads may be cut (`cut`). `inFlight` are those of them certainly
   * cut even when the tracer was stopped on purpose (a mode switch retiring
   * it): still running, or whose exit waited for its copy with their count.
   */
  sourceGone(src: number, out: TracerFrame[] = []): { cut: number[]; inFlight: number[] } {
    this.dead.add(src);
    const cut: number[] = [];
    const inFlight: number[] = [];
    for (const proc of this.procs.fedBy(src)) {
      if (!proc.exited) inFlight.push(proc.pid);
      if (!proc.exited || (proc.exitTs ?? 0) > this.maxTs - CUT_WINDOW_US) cut.push(proc.pid);
    }
    // Ends held for its copy go on now (after the caller has marked their calls): their bytes may be cut.
    for (const [key, held] of this.heldEnds) {
      if (held.owner !== src) continue;
      this.heldEnds.delete(key);
      if (!cut.includes(held.rec.pid)) cut.push(held.rec.pid);
      if (!inFlight.includes(held.rec.pid)) inFlight.push(held.rec.pid);
      out.push(withoutIoCount(held.rec));
    }
    return { cut, inFlight };
  }

  /**
   * Tracer `src` lost records at some moment of `window` (kernel µs; see
   * record-flow.ts): ends held for its copy, dated within it or after, go on
   * without a count, their processes' pids in `cut` (the copy may be among
   * what it lost, and the process's bytes with it: the call must say so).
   */
  sourceLost(src: number, window: { fromTs: number }, out: TracerFrame[], cut: number[]): void {
    for (const [key, held] of this.heldEnds) {
      if (held.owner !== src || held.rec.ts < window.fromTs) continue;
      this.heldEnds.delete(key);
      cut.push(held.rec.pid);
      out.push(withoutIoCount(held.rec));
    }
  }

  /**
   * Exits and thread ends whose payload tracer's copy did not come within
   * HELD_END_MAX_US of the clock (`nowUs`, kernel µs) go on without a count,
   * their processes' pids in `cut`.
   */
  expire(nowUs: number, out: TracerFrame[], cut: number[]): void {
    for (const [key, held] of this.heldEnds) {
      if (nowUs - held.heldAtUs < HELD_END_MAX_US) continue;
      this.heldEnds.delete(key);
      cut.push(held.rec.pid);
      out.push(withoutIoCount(held.rec));
    }
  }

  /** The timestamp (kernel µs) of the oldest end held for its payload tracer's copy; Infinity when none is. */
  get oldestHeldTs(): number {
    let oldest = Infinity;
    for (const held of this.heldEnds.values()) if (held.rec.ts < oldest) oldest = held.rec.ts;
    return oldest;
  }

  /**
   * Takes one frame released in time order, from tracer `src`; appends what
   * goes on to `out`, and to `cut` the pids of processes that exited after
   * the tracer supplying their tree's payloads died: their calls' bytes may
   * be cut.
   */
  pass(rec: TracerFrame, src: number, out: TracerFrame[], cut: number[]): void {
    if ('ts' in rec && rec.ts !== undefined) {
      if (rec.ts > this.maxTs) this.maxTs = rec.ts;
      // Once a second of kernel time: what is forgotten is a minute old.
      if (this.maxTs - this.forgottenAt > 1_000_000) {
        this.forgottenAt = this.maxTs;
        this.forgetOld();
      }
    }
    switch (rec.kind) {
      case 'hello':
        return;
      case 'exec':
        if (this.firstSighting(`x${rec.pid}:${rec.start}:${rec.path}`, src, rec.ts)) out.push(rec);
        return;
      case 'fork':
        if (this.firstSighting(`f${rec.ppid}:${rec.pid}`, src, rec.ts)) out.push(rec);
        return;
      case 'exit': {
        const key = `q${rec.pid}:${rec.start}`;
        if (this.firstSighting(key, src, rec.ts)) this.passCountedEnd(rec, key, src, out, cut);
        else this.passHeldCopy(rec, key, src, out);
        return;
      }
      case 'read':
      case 'write':
        if (this.ownerOf(rec.pid, rec.ts) === src) out.push(rec);
        else this.counters.payloadsFromOther++;
        return;
      case 'uncaptured':
      case 'fd-copy':
        // Bytes a payload tracer saw go by without taking them, and fd copies: once, from the tree's payload tracer.
        if (this.ownerOf(rec.pid, rec.ts) === src) out.push(rec);
        return;
      // The kernel's words come from every tracer (light ones too): once.
      case 'extack':
        if (this.firstSighting(`k${rec.tid}`, src, rec.ts)) out.push(rec);
        return;
      // What a call changed (full mode): from the tracer its tree's payloads come from.
      case 'netlink-send':
      case 'netlink-ack':
      case 'link-name':
      case 'sysctl-open':
      case 'sysctl-write':
        if (this.ownerOf(rec.pid, rec.ts) === src) out.push(rec);
        return;
      case 'thread-exit': {
        // Older tracers' ends, without a time or a count: every copy goes on (ending a thread twice changes nothing).
        if (rec.ts === undefined || rec.pid === undefined) {
          out.push(rec);
          return;
        }
        const key = rec.start === undefined ? `t${rec.tid}` : `t${rec.tid}:${rec.start}`;
        if (this.firstSighting(key, src, rec.ts)) this.passCountedEnd({ ...rec, ts: rec.ts, pid: rec.pid }, key, src, out, cut);
        else this.passHeldCopy(rec, key, src, out);
        return;
      }
      default:
        // A loss notice without its time (each tracer's losses are its own; the assembler marks the calls open).
        out.push(rec);
    }
  }

  /**
   * The first copy of an exit or a thread's end (`key`: its sighting). Its
   * count of payload records holds only from the tracer its process's
   * payloads come from: another tracer's copy is held for that one's (see
   * heldEnds). One ahead of its exec (another CPU's buffer) goes by the tree
   * its process would start.
   */
  private passCountedEnd(rec: CountedEnd & { ts: number; pid: number }, key: string, src: number, out: TracerFrame[], cut: number[]): void {
    const ownerSrc = this.ownerOf(rec.pid, rec.ts);
    if (ownerSrc !== null && this.dead.has(ownerSrc)) {
      cut.push(rec.pid);
    } else if (ownerSrc !== null && ownerSrc !== src) {
      this.heldEnds.set(key, { rec, owner: ownerSrc, heldAtUs: Math.max(this.maxTs, rec.ts) });
      return;
    }
    out.push(ownerSrc === src ? rec : withoutIoCount(rec));
  }

  /** A later copy of an end: the payload tracer's own copy of one held for it goes on (it says how many payload records to expect). */
  private passHeldCopy(rec: CountedEnd, key: string, src: number, out: TracerFrame[]): void {
    const held = this.heldEnds.get(key);
    if (!held || held.owner !== src) return;
    this.heldEnds.delete(key);
    out.push(rec);
  }

  /** The tracer a process's tree takes its payloads from, at `ts` (a dead one too: what it printed before it died is still read). */
  private ownerOf(pid: number, ts: number): number | null {
    return this.procs.payloadSourceOf(pid, ts);
  }

  /** Whether this is the first tracer to report the event `key` at about `ts`; remembers it either way. */
  private firstSighting(key: string, src: number, ts: number): boolean {
    let seen = this.sightings.get(key);
    if (seen === undefined) {
      seen = [];
      this.sightings.set(key, seen);
    }
    let same: Sighting | undefined;
    for (const s of seen) if (!s.srcs.includes(src) && Math.abs(s.ts - ts) <= SAME_EVENT_US && (same === undefined || Math.abs(s.ts - ts) < Math.abs(same.ts - ts))) same = s;
    if (same) {
      same.srcs.push(src);
      this.counters.duplicates++;
      return false;
    }
    seen.push({ ts, srcs: [src] });
    this.sightingOrder.push({ key, ts });
    return true;
  }

  private forgetOld(): void {
    const before = this.maxTs - REMEMBER_US;
    while (this.sightingHead < this.sightingOrder.length && this.sightingOrder[this.sightingHead]!.ts < before) {
      const { key, ts } = this.sightingOrder[this.sightingHead++]!;
      const seen = this.sightings.get(key);
      if (!seen) continue;
      const rest = seen.filter((s) => s.ts !== ts);
      if (rest.length === 0) this.sightings.delete(key);
      else this.sightings.set(key, rest);
    }
    if (this.sightingHead > 4096 && this.sightingHead * 2 > this.sightingOrder.length) {
      this.sightingOrder.splice(0, this.sightingHead);
      this.sightingHead = 0;
    }
    this.procs.forgetEpochs(before);
  }
}
