// `cnirec pod`: a pod's story as terminal lines.
import { describe, expect, it } from 'vitest';
import type { CallTree, PodStory } from '../../api/index.js';
import { formatPodStory, totalsText } from '../../cli/pod-command.js';
import { callView } from './cli-fixture.js';

const plain = (lines: string[]) => lines.map((s) => s.replace(/[\ue000-\ue00f]/g, ''));
const call = (id: string, command: string, plugin: string, extra: Partial<CallTree> = {}): CallTree => ({ ...callView({ id, command, plugin }), children: [], helpers: [], ...extra });
const helper = { seq: 0, pid: 9, ppid: 1, path: '/usr/sbin/iptables', argv: ['iptables', '-t', 'nat', '-N', 'CNI-x'], startedAt: '2026-11-21T18:33:20.110Z', endedAt: null, durationMs: 1.5, exitCode: 0, signal: null, coreDumped: false, payload: { stdout: { bytes: 0, totalBytes: 0, truncated: false }, stderr: { bytes: 0, totalBytes: 0, truncated: false } } };

describe('cnirec pod', () => {
  it('prints each sandbox with its findings, cache entries and its calls as trees, helpers under the call that ran them', () => {
    const add = call('a1', 'ADD', 'bridge', { children: [call('a2', 'ADD', 'host-local', { durationMs: 3.2 })], helpers: [helper] });
    const del = call('d1', 'DEL', 'bridge', { exitCode: 1, ok: false, durationMs: 20, error: 'failed to delete veth: device or resource busy' });
    const sandbox = {
      containerId: 'c0ffee0123456789',
      podUid: 'u1',
      startedAt: '2026-11-21T18:33:20.104Z',
      calls: [add, del],
      totals: { ADD: 40.5, DEL: 20 },
      cache: [{ networkName: 'podman', ifName: 'eth0', ips: ['10.88.0.5/16'], removedAt: null }],
      findings: [{ kind: 'del-loop', severity: 'critical', message: 'DEL of container c0ffee0123456789 (eth0) failed 4 times since …' }],
    };
    const story = { pod: { namespace: 'shop', name: 'cart-0', uid: 'u2', uids: ['u1', 'u2'] }, calls: [add, del], sandboxes: [sandbox], totals: { ADD: 40.5, DEL: 20 }, truncated: true } as unknown as PodStory;
    const lines = plain(formatPodStory(story));
    expect(lines[0]).toBe('pod shop/cart-0  uid u2 (2 pods have had this name; --uid picks one)  ADD 40.5ms  DEL 20.0ms failed');
    expect(lines[1]).toMatch(/^more than 10,000 calls/);
    expect(lines).toContain('sandbox c0ffee012345  2026-11-21T18:33:20.104Z  ADD 40.5ms  DEL 20.0ms failed');
    expect(lines).toContain('  cache: podman eth0 10.88.0.5/16');
    // What is wrong with the sandbox right now, before its calls.
    expect(lines).toContain('  finding del-loop (critical): DEL of container c0ffee0123456789 (eth0) failed 4 times since …');
    const i = lines.findIndex((l) => l.includes(' a1'));
    expect(lines[i]).toMatch(/^2026-11-21T18:33:20\.104Z {4}ADD +bridge +exit 0 +40\.5ms +a1$/);
    expect(lines[i + 1]).toBe(`${' '.repeat(26)}    helper 1.5ms exit 0  iptables -t nat -N CNI-x`);
    expect(lines[i + 2]).toMatch(/Z {6}ADD +host-local .* a2/);
    expect(lines[i + 3]).toMatch(/Z {4}DEL +bridge +exit 1 .* error: failed to delete veth: device or resource busy$/);
    // The pod is said once, at the top, not on every call.
    expect(lines.filter((l) => l.includes('shop/cart-0') && !l.startsWith('more than'))).toHaveLength(1);
  });

  it('counts the failures in the totals: six failed DELs never read as one slow DEL', () => {
    const dels = Array.from({ length: 6 }, (_, i) => ({ command: 'DEL', durationMs: 6.5, ok: false as const, id: `d${i}` }));
    expect(plain([totalsText(dels)])).toEqual(['DEL 39.0ms ×6 all failed']);
    expect(plain([totalsText([...dels.slice(0, 2), { command: 'DEL', durationMs: 1, ok: true }])])).toEqual(['DEL 14.0ms ×3 2 failed']);
  });
});
