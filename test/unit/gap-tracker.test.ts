// The tracer's gaps: counted once however many restart attempts fail, timed from exit to recording again.
import { describe, expect, it } from 'vitest';
import { GapTracker } from '../../collector/tracer/gap-tracker.js';

describe('the gap tracker', () => {
  it('opens a gap when the tracer goes away and closes it when one records again', () => {
    const g = new GapTracker();
    expect(g.begin(1_000_000, 'bpftrace was killed by SIGKILL', 2)).toEqual({ startedAtUs: 1_000_000, endedAtUs: null, reason: 'bpftrace was killed by SIGKILL', incompleteCalls: 2 });
    expect(g.seconds(2_500_000)).toBe(1.5);
    expect(g.end(4_000_000)).toEqual({ startedAtUs: 1_000_000, endedAtUs: 4_000_000, reason: 'bpftrace was killed by SIGKILL', incompleteCalls: 2 });
    expect([g.count, g.seconds(9_000_000), g.latest?.endedAtUs]).toEqual([1, 3, 4_000_000]);
  });

  it('counts failed restart attempts as the same gap', () => {
    const g = new GapTracker();
    g.begin(0, 'first', 1);
    expect(g.begin(500_000, 'second', 0)).toBeNull();
    g.end(2_000_000);
    g.begin(10_000_000, 'again', 0);
    g.end(10_250_000);
    expect([g.count, g.seconds(20_000_000), g.latest?.reason]).toEqual([2, 2.25, 'again']);
  });

  it('closes nothing when no gap is open', () => {
    expect(new GapTracker().end(5)).toBeNull();
  });
});
