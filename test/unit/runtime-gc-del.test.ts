/** The DEL libcni's GC runs for a cached attachment (collector/runtime/gc-del.ts), and what gc plans: table cases. */

import { describe, expect, it } from 'vitest';
import { cniVersionAtLeast, delPlanOf, gcPlanOf, judgeLeaks, mergeAttachments, NO_CACHE_ENTRY } from '../../collector/index.js';

const entry = (over: Partial<Parameters<typeof delPlanOf>[0]> = {}): Parameters<typeof delPlanOf>[0] => ({
  format: 'cniCacheV1',
  containerId: 'abc',
  networkName: 'podnet',
  ifName: 'eth0',
  netns: '/var/run/netns/cni-1',
  cniArgs: [
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', 'ns'],
    ['K8S_POD_NAME', 'web'],
  ],
  capabilityArgs: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }], io: 'x' },
  config: {
    cniVersion: '1.0.0',
    name: 'podnet',
    plugins: [
      { type: 'bridge', bridge: 'cni0', ipam: { type: 'host-local' } },
      { type: 'portmap', capabilities: { portMappings: true, bandwidth: true } },
    ],
  },
  configProblem: null,
  result: { cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }] },
  ...over,
});

describe('the DEL libcni’s GC runs for a cached attachment', () => {
  it('runs the list in reverse with the cached name, version, prevResult and the capability args each plugin asks for', () => {
    const r = delPlanOf(entry());
    if (!r.ok) throw new Error(r.why);
    expect(r.plan.steps.map((s) => s.type)).toEqual(['portmap', 'bridge']);
    const [portmap, bridge] = r.plan.steps.map((s) => JSON.parse(s.stdin) as Record<string, unknown>);
    expect(portmap).toEqual({
      type: 'portmap',
      capabilities: { portMappings: true, bandwidth: true },
      name: 'podnet',
      cniVersion: '1.0.0',
      prevResult: { cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }] },
      runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }] },
    });
    expect(bridge).not.toHaveProperty('runtimeConfig');
    expect(bridge).toMatchObject({ type: 'bridge', name: 'podnet', cniVersion: '1.0.0', ipam: { type: 'host-local' } });
    expect(r.plan.env).toEqual({
      CNI_COMMAND: 'DEL',
      CNI_CONTAINERID: 'abc',
      CNI_NETNS: '/var/run/netns/cni-1',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: 'IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=web',
    });
  });

  it('gives no prevResult before CNI 0.4.0, as libcni does', () => {
    const r = delPlanOf(entry({ config: { cniVersion: '0.3.1', name: 'old', plugins: [{ type: 'bridge' }] } }));
    if (!r.ok) throw new Error(r.why);
    expect(JSON.parse(r.plan.steps[0]!.stdin)).toEqual({ type: 'bridge', name: 'old', cniVersion: '0.3.1' });
  });

  it('takes a single network config (.conf) as a list of one', () => {
    const r = delPlanOf(entry({ config: { cniVersion: '0.4.0', name: 'single', type: 'ptp', ipam: { type: 'host-local' } } }));
    if (!r.ok) throw new Error(r.why);
    expect(r.plan.steps).toHaveLength(1);
    expect(JSON.parse(r.plan.steps[0]!.stdin)).toMatchObject({ type: 'ptp', name: 'single', prevResult: { cniVersion: '1.0.0' } });
  });

  it.each([
    ['a legacy cache file', { format: 'legacy' as const, containerId: null }, /not a cniCacheV1 entry/],
    ['no config', { config: null }, /holds no config/],
    ['a config that was not JSON', { config: null, configProblem: 'the decoded "config" is not JSON' }, /cannot be used: the decoded "config" is not JSON/],
    ['a plugin without a type', { config: { cniVersion: '1.0.0', name: 'x', plugins: [{ type: 'bridge' }, {}] } }, /without a "type"/],
  ])('refuses %s, saying why', (_name, over, why) => {
    const r = delPlanOf(entry(over));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.why).toMatch(why);
  });

  it.each([
    ['1.0.0', '0.4.0', true],
    ['0.4.0', '0.4.0', true],
    ['0.3.1', '0.4.0', false],
    ['', '0.4.0', false],
    ['1.1', '0.4.0', false],
  ])('compares CNI versions: %s ≥ %s is %s', (a, b, want) => expect(cniVersionAtLeast(a, b)).toBe(want));
});

describe('what gc plans', () => {
  it('lists the confirmed leaks, saying which a DEL can free', () => {
    const T = 1_800_000_000_000;
    const attachments = mergeAttachments(
      [{ path: '/r/net-a-eth0', containerId: 'a', network: 'net', ifName: 'eth0', netns: null, ips: ['10.0.0.2'], pod: { namespace: 'ns', name: 'a' }, writtenAtMs: 0 }],
      [{ path: '/n/net/10.0.0.3', ip: '10.0.0.3', network: 'net', containerId: 'b', ifName: 'eth0', reservedAtMs: 0 }],
      () => ({ namespace: 'ns', name: 'b' }),
    );
    const j = judgeLeaks(attachments, { atMs: T, ids: new Set() }, 0, new Map(), { confirmAfterMs: 0, startGraceMs: 0, minAgeMs: 0 });
    const plan = gcPlanOf(j, () => null);
    expect(plan.map((i) => [i.containerId, i.freeable, i.why])).toEqual([
      ['a', true, null],
      ['b', false, NO_CACHE_ENTRY],
    ]);
    expect(plan[0]!.missingSinceMs).toBe(T);
  });
});
