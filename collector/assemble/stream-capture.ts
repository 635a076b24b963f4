/**
 * Collects the segments of one stream (a call's stdin, a helper's stderr…)
 * as they arrive from possibly several processes, and puts them in order.
 */

import type { CapturedStream } from '../types.js';

interface Segment {
  readonly ts: number;
  readonly seq: number;
  readonly data: Buffer;
}

export class StreamCapture {
  private readonly segments: Segment[] = [];
  /** Segments came in (ts, seq) order so far: the common case, no sort needed. */
  private inOrder = true;
  private kept = 0;
  private total = 0;
  private truncated = false;

  constructor(private readonly maxBytes: number) {}

  /**
   * `ts` orders segments across processes and CPUs (the tracer's per-CPU
   * buffers may deliver them out of order); `seq` breaks ties.
   */
  add(ts: number, seq: number, data: Buffer, syscallBytes: number, complete: boolean): void {
    this.total += syscallBytes;
    if (!complete || data.length < syscallBytes) this.truncated = true;
    const room = this.maxBytes - this.kept;
    if (room <= 0) {
      if (data.length > 0) this.truncated = true;
      return;
    }
    // `data` is the caller's own buffer (a finished syscall's payload): kept without a copy.
    const slice = data.length > room ? data.subarray(0, room) : data;
    if (slice.length < data.length) this.truncated = true;
    const last = this.segments[this.segments.length - 1];
    if (last && bySegmentOrder(last, { ts, seq, data: slice }) > 0) this.inOrder = false;
    this.segments.push({ ts, seq, data: slice });
    this.kept += slice.length;
  }

  markTruncated(): void {
    this.truncated = true;
  }

  get byteCount(): number {
    return this.kept;
  }

  /**
   * Where the bytes written after `ts` begin in the snapshot's bytes, null
   * when none were: a plugin's descendants may write to its stdout/stderr
   * after it exited, and the caller still receives those bytes.
   */
  offsetOfFirstAfter(ts: number): number | null {
    let before = 0;
    let after = false;
    for (const s of this.segments) {
      if (s.ts <= ts) before += s.data.length;
      else after = true;
    }
    return after ? before : null;
  }

  snapshot(): CapturedStream {
    if (this.segments.length === 0 && this.total === 0 && !this.truncated) return EMPTY_STREAM;
    const ordered = this.inOrder ? this.segments : [...this.segments].sort(bySegmentOrder);
    return {
      // One segment (one read of a config, one write of a result) is its own bytes: nothing writes into it after.
      bytes: ordered.length === 1 ? ordered[0]!.data : Buffer.concat(ordered.map((s) => s.data)),
      totalBytes: this.total,
      truncated: this.truncated,
    };
  }
}

function bySegmentOrder(a: Segment, b: Segment): number {
  return a.ts - b.ts || a.seq - b.seq;
}

export const EMPTY_STREAM: CapturedStream = Object.freeze({
  bytes: Buffer.alloc(0),
  totalBytes: 0,
  truncated: false,
});
