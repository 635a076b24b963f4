/**
 * Keeps count of the tracer's gaps: from the moment bpftrace went away
 * unasked until a new one proved it records. Pure (times are passed in), so
 * the collector's restart logic stays the only place that knows about
 * processes and timers.
 */

import type { TracerGap } from '../types.js';

export class GapTracker {
  private open: TracerGap | null = null;
  private last: TracerGap | null = null;
  private closedUs = 0;
  private total = 0;

  /** The tracer went away; null when a gap is already open (a restart attempt failed: same gap). */
  begin(atUs: number, reason: string, incompleteCalls: number): TracerGap | null {
    if (this.open) return null;
    this.total++;
    this.open = { startedAtUs: atUs, endedAtUs: null, reason, incompleteCalls };
    this.last = this.open;
    return this.open;
  }

  /** A tracer records again; the closed gap, or null when none was open. */
  end(atUs: number): TracerGap | null {
    if (!this.open) return null;
    const closed: TracerGap = { ...this.open, endedAtUs: Math.max(atUs, this.open.startedAtUs) };
    this.open = null;
    this.last = closed;
    this.closedUs += closed.endedAtUs! - closed.startedAtUs;
    return closed;
  }

  /** Gaps so far, the open one included. */
  get count(): number {
    return this.total;
  }

  /** The open gap, else the last closed one. */
  get latest(): TracerGap | null {
    return this.last;
  }

  /** Seconds without a recording tracer, the open gap counted up to `nowUs`. */
  seconds(nowUs: number): number {
    const openUs = this.open ? Math.max(0, nowUs - this.open.startedAtUs) : 0;
    return (this.closedUs + openUs) / 1e6;
  }
}
