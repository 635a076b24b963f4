import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoFromMs, isoFromUs } from '../../lib/iso-time.js';

const MAX_MS = 8.64e15;

describe('ISO 8601 timestamps without a Date each', () => {
  it('writes exactly what Date#toISOString writes, over Date’s whole range', () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_MS, max: MAX_MS }), (ms) => {
        expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('is right on day, year and era edges, in any order of calls (the cached day must not leak)', () => {
    const edges = [0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, -62_167_219_200_000, -62_167_219_200_001, MAX_MS, -MAX_MS];
    for (const ms of [...edges, ...edges.reverse()]) expect(isoFromMs(ms)).toBe(new Date(ms).toISOString());
  });

  it('follows Date for fractions and out-of-range values', () => {
    expect(isoFromMs(1.5)).toBe(new Date(1.5).toISOString());
    expect(() => isoFromMs(MAX_MS + 1)).toThrow(RangeError);
    expect(() => isoFromMs(Number.NaN)).toThrow(RangeError);
  });

  it('rounds store microseconds down to the millisecond', () => {
    expect(isoFromUs(1_763_000_000_123_999)).toBe('2025-11-13T02:13:20.123Z');
  });
});
