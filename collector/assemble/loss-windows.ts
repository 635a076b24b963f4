/**
 * Spans of kernel time in which a tracer lost records, and whether a call
 * was alive during one. bpftrace says only how many records a CPU buffer
 * dropped, not whose: every call alive then may be hit (see record-flow.ts).
 */

import type { CallState } from './call-state.js';

/** A span of kernel time (monotonic µs) in which a tracer lost records. */
export interface LossWindow {
  fromTs: number;
  toTs: number;
}

/** Whether the call was alive (its exec to its exit; open-ended while it or its descendants run) at some moment of the window. */
export function overlaps(call: CallState, w: LossWindow): boolean {
  return call.execTimes[0]! <= w.toTs && (call.exitTs === null || call.exitTs >= w.fromTs);
}

/** The spans remembered for a while (merged when they overlap), with when each was last extended. */
export class LossWindows {
  private readonly windows: Array<LossWindow & { atMs: number }> = [];

  add(window: LossWindow, nowMs: number): void {
    const last = this.windows[this.windows.length - 1];
    if (last && window.fromTs <= last.toTs) {
      last.toTs = Math.max(last.toTs, window.toTs);
      last.atMs = nowMs;
    } else {
      this.windows.push({ ...window, atMs: nowMs });
    }
  }

  /** Whether the call was alive during any span remembered. */
  hit(call: CallState): boolean {
    return this.windows.some((w) => overlaps(call, w));
  }

  /** Forgets the spans last extended `memoryMs` or more before `nowMs`. */
  forget(nowMs: number, memoryMs: number): void {
    while (this.windows.length > 0 && nowMs - this.windows[0]!.atMs >= memoryMs) this.windows.shift();
  }
}
