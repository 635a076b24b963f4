// `cnirec pod`: a pod's story as terminal lines (no colour: stdout is not a TTY here).
import { describe, expect, it } from 'vitest';
import { formatPodStory, type PodStoryView } from '../../cli/pod-command.js';
import { callView } from './cli-fixture.js';

const call = (id: string, command: string, plugin: string, extra: object = {}) => ({ ...callView({ id, command, plugin }), children: [], helpers: [], ...extra });

describe('cnirec pod', () => {
  it('prints each sandbox with its cache entries and its calls as trees, helpers under the call that ran them', () => {
    const add = call('a1', 'ADD', 'bridge', {
      children: [call('a2', 'ADD', 'host-local', { durationMs: 3.2 })],
      helpers: [{ argv: ['iptables', '-t', 'nat', '-N', 'CNI-x'], durationMs: 1.5, exitCode: 0, signal: null }],
    });
    const del = call('d1', 'DEL', 'bridge', { exitCode: 1, ok: false, durationMs: 20 });
    const story: PodStoryView = {
      pod: { namespace: 'shop', name: 'cart-0', uid: 'u2', uids: ['u1', 'u2'] },
      sandboxes: [
        { containerId: 'c0ffee0123456789', podUid: 'u1', startedAt: '2026-11-21T18:33:20.104Z', calls: [add as never, del as never], totals: { ADD: 40.5, DEL: 20 }, cache: [{ networkName: 'podman', ifName: 'eth0', ips: ['10.88.0.5/16'], removedAt: null }], findings: [{ kind: 'del-loop', message: 'DEL of container c0ffee0123456789 (eth0) failed 4 times since …' }] },
      ],
      totals: { ADD: 40.5, DEL: 20 },
      truncated: true,
    };
    const lines = formatPodStory(story);
    expect(lines[0]).toBe('pod shop/cart-0  uid u2 (2 pods have had this name; --uid picks one)  ADD 40.5ms  DEL 20.0ms');
    expect(lines[1]).toMatch(/^more than 10,000 calls/);
    expect(lines).toContain('sandbox c0ffee012345  2026-11-21T18:33:20.104Z  ADD 40.5ms  DEL 20.0ms');
    expect(lines).toContain('  cache: podman eth0 10.88.0.5/16');
    // What is wrong with the sandbox right now, before its calls.
    expect(lines).toContain('  finding del-loop: DEL of container c0ffee0123456789 (eth0) failed 4 times since …');
    const i = lines.findIndex((l) => l.includes('a1'));
    expect(lines[i]).toMatch(/ {2}ADD +bridge +exit 0 +40\.5ms/);
    expect(lines[i + 1]).toBe('    helper 1.5ms exit 0  iptables -t nat -N CNI-x');
    expect(lines[i + 2]).toMatch(/ {4}ADD +host-local .* a2/);
    expect(lines[i + 3]).toMatch(/ {2}DEL +bridge +exit 1 /);
    // The pod is said once, at the top, not on every call.
    expect(lines.filter((l) => l.includes('shop/cart-0'))).toHaveLength(1);
  });
});
