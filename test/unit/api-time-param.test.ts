// since/until: epoch milliseconds, ISO 8601 (UTC without an offset) or a duration before now, to the store's microseconds.
import { describe, expect, it } from 'vitest';
import { parseTimeParam, readTimeParam } from '../../api/schemas/time-param.js';

const T0_MS = Date.UTC(2025, 10, 21, 18, 33, 20);

describe('a time query parameter', () => {
  it('reads digits as epoch milliseconds', () => {
    expect(parseTimeParam(String(T0_MS))).toBe(T0_MS * 1000);
  });

  it.each([
    ['1795616000', 'looks like epoch seconds (2026-11-25T14:13:20.000Z); epoch values are milliseconds: 1795616000000'],
    ['1795616000000000', 'looks like epoch microseconds (2026-11-25T14:13:20.000Z); epoch values are milliseconds: 1795616000000'],
    ['1795616000000000000', 'looks like epoch nanoseconds (2026-11-25T14:13:20.000Z); epoch values are milliseconds: 1795616000000'],
    ['0', 'is not a plausible time in epoch milliseconds'],
    ['123456', 'is not a plausible time in epoch milliseconds'],
  ])('refuses %s, an epoch value that can only be a mistake, saying what it looks like', (text, message) => {
    const r = readTimeParam(text, T0_MS);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain(message);
  });

  it('reads a time without an offset as UTC, whatever the zone of the process', () => {
    expect(parseTimeParam('2025-11-21T18:33:20')).toBe(T0_MS * 1000);
    expect(parseTimeParam('2025-11-21 18:33:20.547')).toBe((T0_MS + 547) * 1000);
  });

  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['2d', 172_800_000],
    ['1w', 604_800_000],
    ['500ms', 500],
  ])('reads the duration %s as that long before now', (text, ms) => {
    expect(parseTimeParam(text, T0_MS)).toBe((T0_MS - ms) * 1000);
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

  it.each(['', 'yesterday', 'March 7', '1.5', '-5', '2025-11-21T', '2025-13-01', '2025-02-30', '2025-11-21T24:00:00Z', '2025-11-21T18:33:20 UTC', '99999999999999999', '1H', '5 m', '1.5h', 'h'])(
    'refuses %j rather than guess',
    (text) => {
      expect(parseTimeParam(text)).toBeNull();
    },
  );
});
