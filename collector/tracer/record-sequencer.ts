/**
 * The second stage of the record path: puts frames back in time order.
 * bpftrace drains one per-CPU buffer at a time, so when a process moves
 * between CPUs its exit can be printed before its exec, or a read before the
 * fork that made the reader. Each frame with a timestamp is held, and frames
 * are released oldest first once
 *
 * - the stream has moved the reorder window past them: the window follows
 *   how far behind the kernel records arrive (see ReorderWindow), a few tens
 *   of ms while bpftrace keeps up, up to `maxUs` under a flood; or the clock
 *   has (releaseByClock), so a call that goes quiet, or the last one before
 *   the node does, is not held until the next record or the quiet flush; or
 *   the tracers went quiet (releaseQuiet): everything they printed is out;
 * - and no frame older than them is still being put together (`openTs`, the
 *   framers' oldest open frame): an exec never goes on ahead of what came
 *   before it while its argv/env lines are still coming.
 *
 * A frame that arrives behind what was released already goes straight on:
 * the assembler copes with disorder (it orders stream bytes by timestamp and
 * keeps records that come before their process's exec) until it finalizes a
 * call, a grace period after its exit.
 *
 * No per-CPU watermark: an experiment with a 50 Hz profile probe as a
 * heartbeat lost payload records, because syscall tracepoint programs are
 * preemptible and a record can reach its CPU's buffer after a later
 * heartbeat of that CPU; the project keeps to tracepoints.
 *
 * Several tracers feed one sequencer (a capture mode switch, the standby
 * tracer): each frame comes with its source, and leaves with it. Both
 * tracers stamp records with the same clock, so their frames sort together.
 *
 * Pure: the caller passes the time (kernel monotonic µs, the clock of `ts`).
 */

import { ReorderWindow } from './reorder-window.js';
import type { TracerFrame } from '../../bpf/index.js';

/** A frame and the tracer run it came from. */
export interface Sequenced {
  readonly frame: TracerFrame;
  readonly src: number;
}

interface Held extends Sequenced {
  readonly ts: number;
  readonly seq: number;
}

export class RecordSequencer {
  /** Held frames, sorted by (ts, seq); `head` is the first not yet released. */
  private held: Held[] = [];
  private head = 0;
  private seq = 0;
  private maxTs = 0;
  private nowUs = 0;

  constructor(readonly window: ReorderWindow) {}

  /**
   * Takes one frame from source `src` whose first line arrived at
   * `arrivalUs` (kernel monotonic µs); appends to `out` the frames that may
   * now go on, in order, none at or after `openTs`.
   */
  push(frame: TracerFrame, src: number, arrivalUs: number, openTs: number, out: Sequenced[]): void {
    if (arrivalUs > this.nowUs) this.nowUs = arrivalUs;
    // A thread's end from a tracer before its timestamp: nothing to order by.
    if (!('ts' in frame) || frame.ts === undefined) {
      out.push({ frame, src });
      return;
    }
    const ts = frame.ts;
    // How far behind the kernel its tracer read it: when its first line came (its chunk lines may come later).
    this.window.observeLag(arrivalUs - ts, this.nowUs);
    this.insert({ frame, src, ts, seq: this.seq++ });
    if (ts > this.maxTs) this.maxTs = ts;
    this.releaseUpTo(this.maxTs - this.window.windowUs(this.nowUs), openTs, out);
  }

  /** Releases what is due as of `nowUs`: called from a timer, as the window shrinks with time. */
  releaseDue(nowUs: number, openTs: number, out: Sequenced[]): void {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    this.releaseUpTo(this.maxTs - this.window.windowUs(this.nowUs), openTs, out);
  }

  /**
   * Releases what is due by the clock as of `nowUs`: frames that anything
   * older would have to follow by more than the clock window (ReorderWindow).
   * Only once every line the tracer printed before `nowUs` has been pushed:
   * lines still waiting in the pipe would arrive behind what goes on here.
   */
  releaseByClock(nowUs: number, openTs: number, out: Sequenced[]): void {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    const byClock = nowUs - this.window.clockWindowUs(nowUs);
    this.releaseUpTo(Math.max(byClock, this.maxTs - this.window.windowUs(nowUs)), openTs, out);
  }

  /**
   * When (kernel monotonic µs) the oldest held frame is due by the clock,
   * as of `nowUs`; null when nothing is held, or when the oldest waits for
   * an older frame still being put together (its lines, not the clock, let
   * it go).
   */
  clockDueUs(nowUs: number, openTs: number): number | null {
    const first = this.held[this.head];
    return first === undefined || first.ts >= openTs ? null : first.ts + this.window.clockWindowUs(nowUs);
  }

  /**
   * The tracers went quiet as of `nowUs`, or stopped: everything held goes
   * on, but what an open frame (`openTs`) must come before. A quiet stream
   * is no proof bpftrace has read every CPU's buffer (it may be descheduled
   * between two reads); a header whose chunk lines have not all come is,
   * that more lines will come.
   */
  releaseAll(nowUs: number, openTs: number, out: Sequenced[]): void {
    if (nowUs > this.nowUs) this.nowUs = nowUs;
    this.releaseUpTo(Infinity, openTs, out);
  }

  get heldCount(): number {
    return this.held.length - this.head;
  }

  /** The timestamp of the oldest frame held (Infinity when none is): everything before it has gone on. */
  get oldestHeldTs(): number {
    return this.held[this.head]?.ts ?? Infinity;
  }

  private insert(held: Held): void {
    // Input is almost sorted: walk back from the end to the insertion point.
    let i = this.held.length;
    while (i > this.head) {
      const prev = this.held[i - 1]!;
      if (prev.ts < held.ts || (prev.ts === held.ts && prev.seq < held.seq)) break;
      i--;
    }
    if (i === this.held.length) this.held.push(held);
    else this.held.splice(i, 0, held);
  }

  /** Releases frames up to `ts` in order, stopping before the first at or after `openTs`. */
  private releaseUpTo(ts: number, openTs: number, out: Sequenced[]): void {
    const until = Math.min(ts, openTs);
    while (this.head < this.held.length) {
      const held = this.held[this.head]!;
      if (held.ts > until || held.ts >= openTs) break;
      this.head++;
      out.push(held);
    }
    if (this.head > 1024 && this.head * 2 > this.held.length) {
      this.held = this.held.slice(this.head);
      this.head = 0;
    }
  }
}
