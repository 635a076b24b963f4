import { describe, expect, it } from 'vitest';
import type { KernelChange } from '../../../collector/types.js';
import { leftBehindObjects, sharedWithLaterAdds, type LaterAdd } from '../../../store/findings/left-behind-rules.js';
import { replayFixture } from '../../support/replay.js';

const [add, del] = replayFixture('changes-bridge-full.trace', { hostNetnsInode: '4026531833', netnsInodeOf: (p) => (p === '/var/run/netns/chgtest1' ? '4026532177' : null) }).finished.filter(
  (c) => c.plugin === 'bridge',
);

describe('what an ADD created that its DEL left', () => {
  it('is nothing for the recorded bridge ADD and DEL: the veth, the rules and the chain went; the bridge is shared by design', () => {
    expect(leftBehindObjects(add!.changes!, del!.changes!)).toEqual([]);
  });

  it('names the veth (its host end), the chain and its rules when the DEL removed nothing', () => {
    const left = leftBehindObjects(add!.changes!, []);
    expect(left).toEqual(
      expect.arrayContaining([
        { kind: 'link', netns: '/var/run/netns/chgtest1', name: 'eth0', peer: 'vethc738f8b2', table: '' },
        { kind: 'iptables-chain', netns: 'host', name: 'CNI-f0063f9e4fe8a31f15d8166f', table: 'nat' },
        expect.objectContaining({ kind: 'iptables-rule', name: expect.stringContaining('-A POSTROUTING -s 10.96.7.2 -j CNI-f0063f9e4fe8a31f15d8166f') }),
      ]),
    );
    expect(left.some((o) => o.name === 'cnichg0')).toBe(false);
  });

  it('counts a rule in a chain the DEL flushed as gone, and a chain the DEL deleted', () => {
    const onlyChain = del!.changes!.filter((c) => /-[FX] /.test(c.subject));
    const left = leftBehindObjects(add!.changes!, onlyChain);
    expect(left.map((o) => o.kind).sort()).toEqual(['iptables-rule', 'link']);
  });
});

const change = (netns: string, object: KernelChange['object'], action: KernelChange['action'], subject: string, ok: boolean | null = true): KernelChange => ({ atUs: 1, pid: 1, netns, object, action, subject, ok, error: null });
const later = (changes: KernelChange[], iptablesArgv: string[][] = []): LaterAdd => ({ changes, iptablesArgv });

describe('objects a later ADD of another attachment reused are shared, not left behind', () => {
  // What a first pod's ADD made: a vxlan device every pod of the node rides, a chain of the node's port maps and the jump to it, its own veth and rule.
  const first = [
    change('host', 'link', 'add', 'flannel.1 type vxlan'),
    change('host', 'iptables', 'add', '-t nat -N CNI-HOSTPORT-DNAT'),
    change('host', 'iptables', 'add', '-t nat -A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT'),
    change('host', 'iptables', 'add', '-t nat -A CNI-HOSTPORT-DNAT -p tcp --dport 8080 -j CNI-DN-aaa'),
    change('/var/run/netns/pod-a', 'link', 'add', 'eth0 type veth peer veth-a'),
  ];
  const objects = leftBehindObjects(first, []);
  const names = (os: typeof objects) => os.map((o) => o.name);

  it('counts all of it when no other attachment came after', () => {
    expect(names(sharedWithLaterAdds(objects, []).left)).toEqual(names(objects));
    expect(objects).toHaveLength(5);
  });

  it("shares a link a later ADD's change names (as itself, as dev, as master; a refused add of it too), the chain its rule went into, the rule its -C found", () => {
    const second = later(
      [
        change('host', 'link', 'add', 'flannel.1 type vxlan', false),
        change('host', 'iptables', 'add', '-t nat -A CNI-HOSTPORT-DNAT -p tcp --dport 9090 -j CNI-DN-bbb'),
        change('/var/run/netns/pod-b', 'link', 'add', 'eth0 type veth peer veth-b'),
      ],
      [['iptables', '-w', '5', '-t', 'nat', '-C', 'PREROUTING', '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'CNI-HOSTPORT-DNAT']],
    );
    const { left, shared } = sharedWithLaterAdds(objects, [second]);
    expect(names(shared).sort()).toEqual(['-t nat -A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-DNAT', 'flannel.1'].sort());
    // The first pod's own: its port's rule and its veth (another pod's eth0 is in another netns).
    expect(names(left)).toEqual(['-t nat -A CNI-HOSTPORT-DNAT -p tcp --dport 8080 -j CNI-DN-aaa', 'eth0']);
  });

  it('reads a link named as dev of an address or route, or as master, as reused; a same-named link in another netns is not', () => {
    const shared = (c: KernelChange) => sharedWithLaterAdds(objects, [later([c])]).shared.map((o) => o.name);
    expect(shared(change('host', 'route', 'add', '10.1.2.0/24 via 10.1.2.0 dev flannel.1'))).toEqual(['flannel.1']);
    expect(shared(change('host', 'link', 'change', 'veth-b master flannel.1'))).toEqual(['flannel.1']);
    expect(shared(change('/var/run/netns/pod-b', 'address', 'add', '10.1.2.3/24 dev flannel.1'))).toEqual([]);
    expect(shared(change('host', 'iptables', 'add', '-t filter -A CNI-HOSTPORT-DNAT -j ACCEPT'))).toEqual([]);
  });

  it('keeps the recorded bridge DEL clean and its veth, chain and rules unshared by a later pod of its own', () => {
    const unshared = sharedWithLaterAdds(leftBehindObjects(add!.changes!, []), [later([change('/var/run/netns/other', 'link', 'add', 'eth0 type veth peer veth1')])]);
    expect(unshared.shared).toEqual([]);
  });
});

describe('nftables tables and chains an ADD created', () => {
  const nft = (action: KernelChange['action'], subject: string, ok = true) => change('host', 'nftables', action, subject, ok);
  const add = [
    nft('add', 'add table inet cni_a'),
    nft('add', 'add chain inet cni_a fwd { type filter hook forward priority 0; }'),
    nft('add', 'add rule inet cni_a fwd accept'),
    nft('add', 'add chain inet shared pod_a'),
    nft('add', 'add rule inet shared pod_a drop'),
  ];
  const text = (os: ReturnType<typeof leftBehindObjects>) => os.map((o) => `${o.kind} ${o.table} ${o.name}`);

  it('names a table left (its chains go with it) and a chain left in a table it did not create', () => {
    expect(text(leftBehindObjects(add, []))).toEqual(['nftables-table inet cni_a', 'nftables-chain inet shared pod_a']);
  });

  it('counts them removed by delete or destroy of themselves or their table, or a flushed ruleset; a failed delete removes nothing', () => {
    expect(text(leftBehindObjects(add, [nft('delete', 'delete table inet cni_a'), nft('delete', 'destroy chain inet shared pod_a')]))).toEqual([]);
    expect(text(leftBehindObjects(add, [nft('delete', 'flush ruleset')]))).toEqual([]);
    expect(text(leftBehindObjects(add, [nft('delete', 'delete table inet cni_a', false)]))).toEqual(['nftables-table inet cni_a', 'nftables-chain inet shared pod_a']);
  });

  it('shares a table a later ADD of another attachment added to (an add table of one that exists succeeds: each pod says it)', () => {
    const { left, shared } = sharedWithLaterAdds(leftBehindObjects(add, []), [later([nft('add', 'add table inet cni_a'), nft('add', 'add chain inet shared pod_b')])]);
    expect(text(shared)).toEqual(['nftables-table inet cni_a']);
    expect(text(left)).toEqual(['nftables-chain inet shared pod_a']);
  });
});
