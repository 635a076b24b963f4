// The retention settings: durations and sizes as operators write them, 0 to
// turn a limit off, and a message naming the flag for anything else.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../daemon/config.js';
import { parseDuration, parseSize } from '../../daemon/config-units.js';

const MiB = 1024 * 1024;

describe('retention settings', () => {
  it('default to 7 days and 1 GiB', () => {
    const cfg = loadConfig({}, {});
    expect(cfg.retentionMaxAge).toBe(7 * 86_400_000);
    expect(cfg.retentionMaxDbSize).toBe(1024 * MiB);
  });

  it.each([
    ['7d', 7 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    ['90s', 90_000],
    ['1h30m', 90 * 60_000],
    ['2w', 14 * 86_400_000],
    ['1.5d', 36 * 3_600_000],
    ['0', 0],
  ])('reads the maximum age %s', (text, ms) => {
    expect(loadConfig({ retentionMaxAge: text }, {}).retentionMaxAge).toBe(ms);
  });

  it.each([
    ['1GiB', 1024 * MiB],
    ['512MiB', 512 * MiB],
    ['512M', 512 * MiB],
    ['2G', 2048 * MiB],
    ['1GB', 1e9],
    ['100 MB', 1e8],
    ['0', 0],
  ])('reads the maximum size %s', (text, bytes) => {
    expect(loadConfig({ retentionMaxDbSize: text }, {}).retentionMaxDbSize).toBe(bytes);
  });

  it('takes the CNIREC_RETENTION_* variables', () => {
    const cfg = loadConfig({}, { CNIREC_RETENTION_MAX_AGE: '3d', CNIREC_RETENTION_MAX_DB_SIZE: '256MiB' });
    expect(cfg.retentionMaxAge).toBe(3 * 86_400_000);
    expect(cfg.retentionMaxDbSize).toBe(256 * MiB);
  });

  it.each([
    ['retentionMaxAge', '7', /--retention-max-age \(CNIREC_RETENTION_MAX_AGE\): "7" is not a duration: use 0 \(off\) or a number with a unit/],
    ['retentionMaxAge', '7 days', /is not a duration/],
    ['retentionMaxAge', '-1d', /is not a duration/],
    ['retentionMaxAge', '0d', /is zero: write 0 to turn it off/],
    ['retentionMaxAge', '', /is not a duration/],
    ['retentionMaxDbSize', '1 gigabyte', /--retention-max-db-size \(CNIREC_RETENTION_MAX_DB_SIZE\): "1 gigabyte" is not a size/],
    ['retentionMaxDbSize', '1024', /is not a size/],
    ['retentionMaxDbSize', '1MiB', /must be 0 \(off\) or at least 4MiB/],
  ] as const)('rejects %s=%j with a message naming the flag and the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, {})).toThrow(message);
  });

  it('parses without the config around it', () => {
    expect(parseDuration(' 45m ')).toEqual({ ok: true, value: 45 * 60_000 });
    expect(parseSize('1.5GiB')).toEqual({ ok: true, value: 1.5 * 1024 * MiB });
    expect(parseSize('1.5XB').ok).toBe(false);
  });
});
