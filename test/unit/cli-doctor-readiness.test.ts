// `cnirec doctor` with a daemon that follows CNI STATUS: each network's readiness, a failing plugin's error in one line.
import { describe, expect, it } from 'vitest';
import type { ReadinessList } from '../../api/index.js';
import { formatReadiness } from '../../cli/doctor-format.js';

const plain = (lines: string[]) => lines.map((s) => s.replace(/[\ue000-\ue00f]/g, ''));
type Item = ReadinessList['items'][number];
const latency = { p50Ms: 2.5, p99Ms: 10, maxMs: 8.1, meanMs: 3 };
const network = (over: Partial<Item> = {}): Item => ({
  network: 'podnet',
  ready: true,
  since: '2026-11-21T18:00:00.000Z',
  lastCheckedAt: '2026-11-21T18:22:00.000Z',
  plugin: null,
  error: null,
  checks: 264,
  latency,
  plugins: [],
  transitions: [],
  ...over,
});

describe('cnirec doctor: readiness', () => {
  it('says each network is ready or not, since when, its checks and latency; a failing plugin with its error', () => {
    expect(
      plain(
        formatReadiness([
          network(),
          network({ network: 'macvlan-net', ready: false, plugin: 'macvlan', error: { code: 50, msg: 'master eth1 is down', details: null } }),
          network({ network: null, ready: false, plugin: 'ptp', error: { code: null, msg: null, details: null }, latency: { p50Ms: null, p99Ms: null, maxMs: null, meanMs: null } }),
        ]),
      ),
    ).toEqual([
      'readiness (CNI STATUS)',
      '  "podnet" ready since 2026-11-21T18:00:00.000Z (264 checks, last 2026-11-21T18:22:00.000Z, p50 2.5 ms, p99 10 ms)',
      '  "macvlan-net" not ready since 2026-11-21T18:00:00.000Z (264 checks, last 2026-11-21T18:22:00.000Z, p50 2.5 ms, p99 10 ms)',
      '    macvlan answers error 50: master eth1 is down: the runtime reports the node NotReady',
      '  (network not known) not ready since 2026-11-21T18:00:00.000Z (264 checks, last 2026-11-21T18:22:00.000Z)',
      '    ptp answers error (its message comes with the next check captured with payloads): the runtime reports the node NotReady',
    ]);
  });

  it('says when no STATUS was recorded', () => {
    expect(plain(formatReadiness([]))[1]).toContain('no STATUS recorded');
  });
});
