import { describe, expect, it } from 'vitest';
import { leftBehindObjects } from '../../../store/findings/left-behind-rules.js';
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
