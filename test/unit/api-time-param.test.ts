// since/until: epoch milliseconds or ISO 8601, to the store's microseconds.
import { describe, expect, it } from 'vitest';
import { parseTimeParam } from '../../api/schemas/time-param.js';

const T0_MS = Date.UTC(2025, 10, 21, 18, 33, 20);

describe('a time query parameter', () => {
  it('reads digits as epoch milliseconds', () => {
    expect(parseTimeParam(String(T0_MS))).toBe(T0_MS * 1000);
    expect(parseTimeParam('0')).toBe(0);
  });

  it.each([
    ['2025-11-21T18:33:20Z', 0],
    ['2025-11-21T18:33:20.000Z', 0],
    ['2025-11-21t18:33:20z', 0],
    ['2025-11-21 18:33:20Z', 0],
    ['2025-11-21T19:33:20+01:00', 0],
    ['2025-11-21T19:33:20+0100', 0],
    ['2025-11-21T19:33:20+01', 0],
    ['2025-11-21T18:33Z', -20_000_000],
    ['2025-11-21T18:33:20.5Z', 500_000],
    ['2025-11-21T18:33:20.123456Z', 123_456],
    ['2025-11-21T18:33:20,123456789Z', 123_456],
  ])('reads %s as an ISO 8601 instant, to the microsecond', (text, offsetUs) => {
    expect(parseTimeParam(text)).toBe(T0_MS * 1000 + offsetUs);
  });

  it('reads a bare date as midnight UTC', () => {
    expect(parseTimeParam('2025-11-21')).toBe(Date.UTC(2025, 10, 21) * 1000);
  });

  it.each(['', 'yesterday', 'March 7', '1.5', '-5', '2025-11-21T', '2025-13-01', '2025-02-30', '2025-11-21T24:00:00Z', '2025-11-21T18:33:20 UTC', '99999999999999999'])(
    'refuses %j rather than guess',
    (text) => {
      expect(parseTimeParam(text)).toBeNull();
    },
  );
});
