/**
 * Puts tracer records back in time order. bpftrace drains one per-CPU buffer
 * at a time, so when a process moves between CPUs its exit can be printed
 * before its exec, or a read before the fork that made the reader. Each
 * record with a timestamp is held, together with the chunk lines that belong
 * to it, and records are released oldest first once
 *
 * - the stream has moved the reorder window past them: the window follows
 *   how far behind the kernel records arrive (see ReorderWindow), a few tens
 *   of ms while bpftrace keeps up, up to `maxUs` under a flood; or the clock
 *   has (releaseByClock), so a call that goes quiet, or the last one before
 *   the node does, is not held until the next record or the quiet flush; and
 * - their chunk lines are all in (the header says how many follow), so an
 *   exec never goes on without its argv/env nor a write without its bytes
 *   while they are still coming. A group whose chunks were lost is let go
 *   once the stream is `maxUs` past it;
 * - or the tracer went quiet (releaseQuiet): everything it had is out, but
 *   for a header whose chunk lines have not all come: they are certainly
 *   still coming (bpftrace, descheduled, read the header and not yet the
 *   rest of that CPU's buffer), unless the clock is `maxUs` past it. At
 *   stop (flush) everything goes.
 *
 * A record that arrives behind what was released already goes straight on:
 * the assembler copes with disorder (it orders stream bytes by timestamp and
 * keeps records that come before their process's exec) until it finalizes a
 * call, a grace period after its exit.
 *
 * No per-CPU watermark: an experiment with a 50 Hz profile probe as a
 * heartbeat lost payload records, because syscall tracepoint programs are
 * preemptible and a record can reach its CPU's buffer after a later
 * heartbeat of that CPU; the project keeps to tracepoints.
 *
 * Several tracers may feed one sequencer (a capture mode switch, the standby
 * tracer): each record comes with its source, chunk lines are matched to
 * their header within the same source, and `releasedSources` says, for the
 * records a call returned, which source each came from. Both tracers stamp
 * records with the same clock, so their records sort together.
 *
 * Pure: the caller passes the time (kernel monotonic µs, the clock of `ts`).
 */

import { ReorderWindow } from './reorder-window.js';
import { expectedChunks, isKernelRecord, type TracerRecord } from '../../bpf/index.js';

interface Group {
  readonly ts: number;
  readonly seq: number;
  readonly src: number;
  readonly records: TracerRecord[];
  /** Chunk lines still to come. */
  missing: number;
}

export class RecordSequencer {
  /** Held groups, sorted by (ts, seq); `head` is the first not yet released. */
  private held: Group[] = [];
  private head = 0;
  private seq = 0;
  private maxTs = 0;
  private nowUs = 0;
  private readonly execGroups = new Map<number, Group>();
  private readonly ioGroups = new Map<number, Group>();
  /**
   * The source of each record the last push/release/flush returned, in the
   * same order (refilled by every call that returns records).
   */
  readonly releasedSources: number[] = [];
  private src = 0;

  constructor(readonly window: ReorderWindow) {}

  /**
   * Takes one record from source `src` that arrived at `nowUs` (kernel
   * monotonic µs); returns the records that may now go on, in order.
   */
  push(rec: TracerRecord, nowUs: number, src = 0): TracerRecord[] {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    this.src = src;
    // What a call did to the kernel: ordered by time, after the exec of their process.
    if (isKernelRecord(rec)) return this.hold(rec, null, 0);
    switch (rec.kind) {
      case 'exec':
        return this.hold(rec, this.execGroups, cpuGroupKey(src, rec.pid, rec.cpu));
      case 'read':
      case 'write':
        return this.hold(rec, this.ioGroups, cpuGroupKey(src, rec.tid, rec.cpu));
      case 'fork':
      case 'exit':
      case 'uncaptured':
      case 'fd-copy':
        return this.hold(rec, null, 0);
      case 'thread-exit':
        // Behind the thread's fork: released ahead of it, the end of a thread would leave it followed for good.
        return rec.ts === undefined ? this.single(rec) : this.hold({ ...rec, ts: rec.ts }, null, 0);
      case 'exec-parent':
      case 'exec-path-chunk':
      case 'exec-cwd-name':
        // Printed between the exec's header and its B chunks: the group is held until those are in.
        return this.attach(this.execGroups.get(cpuGroupKey(src, rec.pid, rec.cpu)), rec, false);
      case 'exec-chunk':
        return this.attach(this.execGroups.get(cpuGroupKey(src, rec.pid, rec.cpu)), rec, true);
      case 'data-chunk':
        return this.attach(this.ioGroups.get(cpuGroupKey(src, rec.tid, rec.cpu)), rec, true);
      default:
        // lost, hello, noise (and an older tracer's thread-exit): no timestamp to order by.
        return this.single(rec);
    }
  }

  /** Releases what is due as of `nowUs`: called from a timer, as the window shrinks with time. */
  releaseDue(nowUs: number): TracerRecord[] {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    return this.release();
  }

  /**
   * Releases what is due by the clock as of `nowUs`: records that anything
   * older would have to follow by more than the clock window (ReorderWindow).
   * Only once every line the tracer printed before `nowUs` has been pushed:
   * lines still waiting in the pipe would arrive behind what goes on here.
   */
  releaseByClock(nowUs: number): TracerRecord[] {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    const byClock = nowUs - this.window.clockWindowUs(nowUs);
    return this.releaseUpTo(Math.max(byClock, this.maxTs - this.window.windowUs(nowUs)), this.maxTs - this.window.options.maxUs);
  }

  /**
   * When (kernel monotonic µs) the oldest held record is due by the clock,
   * as of `nowUs`; null when nothing is held, or when the oldest still waits
   * for chunk lines (their arrival, not the clock, lets it go).
   */
  clockDueUs(nowUs: number): number | null {
    const first = this.held[this.head];
    return first === undefined || first.missing > 0 ? null : first.ts + this.window.clockWindowUs(nowUs);
  }

  /** No tracer has anything more: release everything held. */
  flush(): TracerRecord[] {
    return this.releaseUpTo(Infinity, Infinity);
  }

  /**
   * The tracers went quiet as of `nowUs`: release everything held, but a
   * group still missing chunk lines (and what follows it) until the clock is
   * `maxUs` past it. A quiet stream is no proof bpftrace has read every CPU's
   * buffer (it may be descheduled between two reads); a header's count of
   * chunks is, that more lines will come.
   */
  releaseQuiet(nowUs: number): TracerRecord[] {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    return this.releaseUpTo(Infinity, nowUs - this.window.options.maxUs);
  }

  get heldCount(): number {
    return this.held.length - this.head;
  }

  private hold(rec: TracerRecord & { ts: number }, groups: Map<number, Group> | null, key: number): TracerRecord[] {
    this.window.observe(rec.ts, this.nowUs);
    const group: Group = { ts: rec.ts, seq: this.seq++, src: this.src, records: [rec], missing: expectedChunks(rec) };
    if (groups) groups.set(key, group);
    this.insert(group);
    if (rec.ts > this.maxTs) this.maxTs = rec.ts;
    return this.release();
  }

  private attach(group: Group | undefined, rec: TracerRecord, isChunk: boolean): TracerRecord[] {
    if (group && this.isHeld(group)) {
      group.records.push(rec);
      if (isChunk && group.missing > 0) {
        group.missing--;
        // Its last chunk: it may be what held the head back.
        if (group.missing === 0) return this.release();
      }
      this.releasedSources.length = 0;
      return [];
    }
    // Its header was released already (or lost): the assembler decides what it is worth.
    return this.single(rec);
  }

  private single(rec: TracerRecord): TracerRecord[] {
    this.releasedSources.length = 0;
    this.releasedSources.push(this.src);
    return [rec];
  }

  private release(): TracerRecord[] {
    return this.releaseUpTo(this.maxTs - this.window.windowUs(this.nowUs), this.maxTs - this.window.options.maxUs);
  }

  private isHeld(group: Group): boolean {
    // Groups are released from the front, in order.
    const first = this.held[this.head];
    return first !== undefined && (group.ts > first.ts || (group.ts === first.ts && group.seq >= first.seq));
  }

  private insert(group: Group): void {
    // Input is almost sorted: walk back from the end to the insertion point.
    let i = this.held.length;
    while (i > this.head) {
      const prev = this.held[i - 1]!;
      if (prev.ts < group.ts || (prev.ts === group.ts && prev.seq < group.seq)) break;
      i--;
    }
    this.held.splice(i, 0, group);
  }

  /** Releases groups up to `ts` in order; one still missing chunks stops it, unless it is at or before `incompleteTs`. */
  private releaseUpTo(ts: number, incompleteTs: number): TracerRecord[] {
    const out: TracerRecord[] = [];
    const sources = this.releasedSources;
    sources.length = 0;
    while (this.head < this.held.length) {
      const group = this.held[this.head]!;
      if (group.ts > ts || (group.missing > 0 && group.ts > incompleteTs)) break;
      this.head++;
      for (const r of group.records) {
        out.push(r);
        sources.push(group.src);
      }
      this.forget(group);
    }
    if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  private forget(group: Group): void {
    const first = group.records[0]!;
    if (first.kind === 'exec') deleteIfSame(this.execGroups, cpuGroupKey(group.src, first.pid, first.cpu), group);
    if (first.kind === 'read' || first.kind === 'write') deleteIfSame(this.ioGroups, cpuGroupKey(group.src, first.tid, first.cpu), group);
  }
}

/** Pids and tids stay below 2^22 (the kernel's pid_max limit): a source's key space sits above them. */
const PID_SPACE = 4_194_304;

function groupKey(src: number, id: number): number {
  return (src % 64) * PID_SPACE + id;
}

/**
 * A header's chunk lines come through the CPU buffer it did: a thread's next
 * read or write on another CPU, or another exec of the pid (in place, or the
 * pid reused) on another CPU, may come between them.
 */
function cpuGroupKey(src: number, tid: number, cpu: number | undefined): number {
  return groupKey(src, tid) + (cpu ?? 0) * 64 * PID_SPACE;
}

function deleteIfSame(groups: Map<number, Group>, key: number, group: Group): void {
  if (groups.get(key) === group) groups.delete(key);
}
