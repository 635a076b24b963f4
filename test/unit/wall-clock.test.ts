import { describe, expect, it } from 'vitest';
import { MonoToEpoch, preciseOffsetUs, type ClockSources } from '../../collector/tracer/wall-clock.js';

/** Clocks a test moves by hand: monotonic µs and a wall clock `wallMinusMonoUs` ahead of it. */
function fakeClocks(wallMinusMonoUs: number) {
  const state = { mono: 1_000_000_000, wallMinusMonoUs, reads: 0 };
  const src: ClockSources = {
    // Each read of the monotonic clock advances it a little, as a real one does.
    monoUs: () => (state.mono += 3),
    epochMs: () => {
      state.reads++;
      return Math.floor((state.mono + state.wallMinusMonoUs) / 1000);
    },
  };
  return { src, state };
}

describe('the tracer clock → wall clock map', () => {
  it('takes the offset to a few µs, not to Date.now()’s millisecond', () => {
    const { src } = fakeClocks(1_763_000_000_123_456);
    expect(Math.abs(preciseOffsetUs(src) - 1_763_000_000_123_456)).toBeLessThanOrEqual(6);
  });

  it('keeps its offset through millisecond jitter, so a short call never ends before it starts', () => {
    const { src, state } = fakeClocks(1_763_000_000_000_700);
    const clock = new MonoToEpoch(src, { checkEveryUs: 1_000, stepUs: 20_000 });
    const offset = clock.currentOffsetUs;
    for (let i = 0; i < 1_000; i++) {
      state.mono += 997;
      const start = state.mono;
      const a = clock.toEpochUs(start);
      const b = clock.toEpochUs(start + 200);
      expect(b - a).toBe(200);
    }
    expect(clock.currentOffsetUs).toBe(offset);
  });

  it('follows a step of the wall clock (NTP step, date set, resume from suspend) and says by how much', () => {
    const { src, state } = fakeClocks(1_763_000_000_000_000);
    const steps: number[] = [];
    const clock = new MonoToEpoch(src, { checkEveryUs: 5_000_000, onStep: (us) => steps.push(us) });
    const before = clock.toEpochUs(state.mono);

    state.wallMinusMonoUs += 90_000_000; // the wall clock jumps 90 s ahead
    state.mono += 1_000_000;
    // Not checked again yet: still the old offset.
    expect(clock.toEpochUs(state.mono) - before).toBeLessThan(1_100_000);
    state.mono += 5_000_000;
    const after = clock.toEpochUs(state.mono);
    expect(after - before).toBeGreaterThan(95_000_000);
    expect(steps).toHaveLength(1);
    expect(Math.abs(steps[0]! - 90_000_000)).toBeLessThanOrEqual(10);
  });

  it('checks the wall clock at most once per interval', () => {
    const { src, state } = fakeClocks(1_763_000_000_000_000);
    const clock = new MonoToEpoch(src, { checkEveryUs: 5_000_000 });
    const reads = state.reads;
    for (let i = 0; i < 100; i++) clock.toEpochUs(state.mono);
    expect(state.reads).toBe(reads);
  });
});
