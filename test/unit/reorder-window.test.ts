// The reorder window follows how far behind the kernel tracer records arrive:
// factor × the largest recent lag, within its floor and cap, widening at the
// first late record and narrowing once the lags have stayed low for the horizon.
import { describe, expect, it } from 'vitest';
import { REORDER_WINDOW, ReorderWindow } from '../../collector/tracer/reorder-window.js';

const OPTIONS = { minUs: 30_000, maxUs: 2_000_000, factor: 1.5, horizonUs: 2_000_000 };
const T = 50_000_000; // kernel monotonic µs: 50 s of uptime

describe('ReorderWindow', () => {
  it('is its floor before any record and while records arrive within a few ms', () => {
    const w = new ReorderWindow(OPTIONS);
    expect(w.windowUs(T)).toBe(30_000);
    w.observe(T - 2_000, T);
    w.observe(T + 1_000, T + 4_000);
    expect(w.maxLagUs(T + 4_000)).toBe(3_000);
    expect(w.windowUs(T + 4_000)).toBe(30_000);
  });

  it('widens to factor × the lag of the first late record', () => {
    const w = new ReorderWindow(OPTIONS);
    w.observe(T - 1_000, T);
    w.observe(T - 200_000, T + 10_000);
    expect(w.maxLagUs(T + 10_000)).toBe(210_000);
    expect(w.windowUs(T + 10_000)).toBe(315_000);
  });

  it('never exceeds its cap, however far behind records are', () => {
    const w = new ReorderWindow(OPTIONS);
    w.observe(T - 17_000_000, T);
    expect(w.windowUs(T)).toBe(2_000_000);
  });

  it('keeps a lag for the horizon, then narrows back to the floor', () => {
    const w = new ReorderWindow(OPTIONS);
    w.observe(T - 100_000, T);
    w.observe(T + 1_500_000, T + 1_501_000);
    expect(w.windowUs(T + 1_700_000)).toBe(150_000);
    // 2 s on, only the small lag seen since is left.
    expect(w.windowUs(T + 2_100_000)).toBe(30_000);
    expect(w.maxLagUs(T + 2_100_000)).toBe(1_000);
    expect(w.maxLagUs(T + 4_000_000)).toBe(0);
  });

  it('counts a record stamped after its arrival (clock granularity) as no lag', () => {
    const w = new ReorderWindow(OPTIONS);
    w.observe(T + 5, T);
    expect(w.maxLagUs(T)).toBe(0);
  });

  it('refuses options that make no window', () => {
    expect(() => new ReorderWindow({ ...OPTIONS, maxUs: 10_000 })).toThrow(RangeError);
    expect(() => new ReorderWindow({ ...OPTIONS, horizonUs: 0 })).toThrow(RangeError);
    expect(() => new ReorderWindow({ ...OPTIONS, factor: -1 })).toThrow(RangeError);
  });

  it("the daemon's window is a few tens of ms at rest and 2 s at most", () => {
    const w = new ReorderWindow(REORDER_WINDOW);
    expect(w.windowUs(T)).toBeGreaterThanOrEqual(20_000);
    expect(w.windowUs(T)).toBeLessThanOrEqual(50_000);
    w.observe(0, T);
    expect(w.windowUs(T)).toBe(2_000_000);
  });
});
