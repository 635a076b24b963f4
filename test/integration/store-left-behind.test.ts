// The left-behind finding over a real store: what a DEL left is raised unless a later ADD of another
// attachment reused it (its changes, or its iptables helpers' argv, name it): shared, not left behind.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KernelChange } from '../../collector/types.js';
import { createFindingsReader } from '../../store/findings/findings-reader.js';
import { createLeftBehindCheck } from '../../store/findings/left-behind.js';
import { finished, makeCall, makeHelper, T0_MS } from './api-harness.js';
import { tempStore, type TempStore } from './harness.js';

const change = (netns: string, object: KernelChange['object'], action: KernelChange['action'], subject: string): KernelChange => ({ atUs: 1, pid: 1, netns, object, action, subject, ok: true, error: null });

describe('left-behind over the store, with objects shared by later ADDs', () => {
  let t: TempStore;
  beforeEach(() => {
    t = tempStore('cnirec-left-behind-');
  });
  afterEach(() => t.remove());

  const addA = () =>
    makeCall({
      at: 0,
      podName: 'a',
      changes: [
        change('host', 'link', 'add', 'vx0 type vxlan'),
        change('host', 'iptables', 'add', '-t nat -A PREROUTING -j CNI-PORTS'),
        change('/var/run/netns/cni-a', 'link', 'add', 'eth0 type veth peer veth-a'),
      ],
    });
  const delA = () => makeCall({ at: 60_000_000, podName: 'a', command: 'DEL', changes: [change('/var/run/netns/cni-a', 'link', 'delete', 'eth0')] });
  const open = () => createFindingsReader(t.db).findingGroups({ limit: 10 }).items.filter((f) => f.kind === 'left-behind');
  const detect = () => createLeftBehindCheck(t.db, () => true).detect(T0_MS + 120_000);

  it('raises what the DEL left when no other attachment came after its ADD', () => {
    t.store.writeEvents([finished(addA()), finished(delA())]);
    detect();
    expect(open()).toHaveLength(1);
    expect(open()[0]!.message).toContain('link vx0 (host)');
    expect(open()[0]!.message).toContain('iptables rule -t nat -A PREROUTING -j CNI-PORTS');
  });

  it("counts none of it once a later ADD of another pod reused the link (its change names it) and the rule (its helper's -C found it)", () => {
    const addB = makeCall({
      at: 30_000_000,
      podName: 'b',
      changes: [change('host', 'link', 'change', 'veth-b master vx0')],
      helpers: [makeHelper({ path: '/usr/sbin/iptables', argv: ['iptables', '--wait', '-t', 'nat', '-C', 'PREROUTING', '-j', 'CNI-PORTS'] })],
    });
    t.store.writeEvents([finished(addA()), finished(addB), finished(delA())]);
    detect();
    expect(open()).toEqual([]);
  });

  it('names what was shared beside what is left', () => {
    const add = addA();
    const withOwnRule = { ...add, changes: [...add.changes!, change('host', 'iptables', 'add', '-t nat -A CNI-PORTS -p tcp --dport 80 -j DNAT --to-destination 10.0.0.5:80')] };
    const addB = makeCall({ at: 30_000_000, podName: 'b', changes: [change('host', 'route', 'add', '10.9.0.0/16 dev vx0')] });
    t.store.writeEvents([finished(withOwnRule), finished(addB), finished(delA())]);
    detect();
    expect(open()).toHaveLength(1);
    expect(open()[0]!.message).toMatch(/still has it: iptables rule -t nat -A PREROUTING -j CNI-PORTS; iptables rule -t nat -A CNI-PORTS -p tcp --dport 80 .*\. Not counted, as shared \(a later ADD of another attachment reused them\): link vx0 \(host\)$/);
  });

  it('does not count an ADD before the first one, nor a later ADD of the same attachment, as reuse', () => {
    const before = makeCall({ at: -1_000_000, podName: 'z', changes: [change('host', 'link', 'change', 'veth-z master vx0')] });
    t.store.writeEvents([finished(before), finished(addA()), finished(delA())]);
    const again = makeCall({ at: 90_000_000, podName: 'a', changes: [change('host', 'link', 'add', 'vx0 type vxlan')] });
    t.store.writeEvents([finished(again)]);
    detect();
    expect(open()).toHaveLength(1);
    expect(open()[0]!.message).not.toContain('Not counted');
  });
});
