import { describe, expect, it } from 'vitest';
import { changeSummaryText } from '../../../collector/changes/index.js';
import { createRedactor } from '../../../collector/redact/redact-events.js';
import { defaultRedactionRules } from '../../../collector/redact/redaction-rules.js';
import { replay, replayFixture, traceLines } from '../../support/replay.js';
import type { CniCall, KernelChange } from '../../../collector/types.js';

/** The recorded run: the host's netns and the pod's (chgtest1) had these inodes. */
const HOST = '4026531833';
const POD = '4026532177';
const POD_PATH = '/var/run/netns/chgtest1';

function bridgeCalls(opts: { names?: boolean } = {}): CniCall[] {
  const named = opts.names ?? true;
  const r = replayFixture('changes-bridge-full.trace', named ? { hostNetnsInode: HOST, netnsInodeOf: (p) => (p === POD_PATH ? POD : null) } : {});
  expect(r.parseErrors).toEqual([]);
  return r.finished.filter((c) => c.plugin === 'bridge');
}

const line = (c: KernelChange): string => `${c.netns} ${c.object} ${c.action} ${c.subject}`;

describe('the changes of a recorded Debian bridge ADD (isGateway, ipMasq, default route), its DEL, and a refused mtu', () => {
  const [add, del, mtu] = bridgeCalls();

  it('lists what the ADD changed in order, in the netns each was made in, as ip/sysctl/iptables say it', () => {
    const lines = add!.changes!.map(line);
    expect(lines).toEqual(
      expect.arrayContaining([
        'host link add cnichg0 type bridge',
        'host sysctl change net.ipv6.conf.cnichg0.accept_ra = 0',
        'host link change cnichg0 up',
        `${POD_PATH} link add eth0 type veth peer vethc738f8b2`,
        'host link change vethc738f8b2 master cnichg0',
        `${POD_PATH} sysctl change net.ipv6.conf.eth0.accept_dad = 0`,
        `${POD_PATH} sysctl change net.ipv4.conf.eth0.arp_notify = 1`,
        `${POD_PATH} address add 10.96.7.2/24 dev eth0`,
        `${POD_PATH} route add default via 10.96.7.1 dev eth0`,
        'host address add 10.96.7.1/24 dev cnichg0',
        'host iptables add -t nat -N CNI-f0063f9e4fe8a31f15d8166f',
        'host iptables add -t nat -A CNI-f0063f9e4fe8a31f15d8166f ! -d 224.0.0.0/4 -j MASQUERADE -m comment --comment "name: \\"chgnet\\" id: \\"chgtest1abc\\""',
      ]),
    );
    expect(lines.indexOf('host link add cnichg0 type bridge')).toBeLessThan(lines.indexOf(`${POD_PATH} address add 10.96.7.2/24 dev eth0`));
    expect(add!.changes!.every((c) => c.ok === true)).toBe(true);
    expect(add!.kernelMessages).toEqual([]);
  });

  it('leaves reads out: link and address gets, iptables --version, -S and -C', () => {
    const subjects = add!.changes!.map((c) => c.subject).join('\n');
    expect(subjects).not.toMatch(/--version|(^| )-S( |$)|(^| )-C /m);
    expect(add!.changes!.filter((c) => c.object === 'iptables')).toHaveLength(4);
  });

  it('lists what the DEL removed, and the iptables steps that failed as failed', () => {
    const lines = del!.changes!.map(line);
    expect(lines[0]).toBe(`${POD_PATH} link delete eth0`);
    expect(lines).toContain('host iptables delete -t nat -X CNI-f0063f9e4fe8a31f15d8166f');
    expect(del!.changes!.filter((c) => c.ok === false).map((c) => c.error?.errno)).toEqual(['exit 1', 'exit 1']);
  });

  it('tells the refused link add with its errno and the kernel text, which is also a kernel message', () => {
    expect(mtu!.outcome?.exitCode).toBe(1);
    expect(mtu!.changes).toEqual([
      expect.objectContaining({ netns: 'host', object: 'link', action: 'add', subject: 'cnimtu0 type bridge mtu 70000', ok: false, error: { errno: 'EINVAL', message: 'mtu greater than device maximum' } }),
    ]);
    expect(mtu!.kernelMessages).toEqual([expect.objectContaining({ process: 'bridge', message: 'mtu greater than device maximum', pid: mtu!.pid })]);
  });

  it('names a netns it cannot place by its inode', () => {
    const [unnamed] = bridgeCalls({ names: false });
    expect(new Set(unnamed!.changes!.filter((c) => c.object !== 'iptables').map((c) => c.netns))).toEqual(new Set([`netns:[${HOST}]`, `netns:[${POD}]`]));
  });

  it('gives a light call no changes (null, not "did nothing") but the kernel messages', () => {
    // What a light tracer prints of the same run: no payload, netlink or sysctl lines, the K line still.
    const lines = traceLines('changes-bridge-full.trace')
      .filter((l) => !/^[LMAIOYRWDU] /.test(l))
      .map((l) => l.replace(/^H 1 full /, 'H 1 light '));
    const light = replay(lines).finished.filter((c) => c.plugin === 'bridge');
    expect(light).toHaveLength(3);
    expect(light.map((c) => c.changes)).toEqual([null, null, null]);
    expect(light[2]!.kernelMessages!.map((m) => m.message)).toEqual(['mtu greater than device maximum']);
  });
});

describe('an iptables change on its way out of the node', () => {
  it('is said again from the redacted helper argv: a secret in the argv never leaves through the change', () => {
    const [add] = bridgeCalls();
    const helper = add!.helpers.find((h) => h.argv.includes('-N'))!;
    const secretArgv = [...helper.argv, '-m', 'comment', '--comment', '--token=hunter2-s3cr3t'];
    const call: CniCall = {
      ...add!,
      helpers: add!.helpers.map((h) => (h === helper ? { ...h, argv: secretArgv } : h)),
      changes: add!.changes!.map((c) => (c.pid === helper.pid ? { ...c, subject: secretArgv.slice(1).join(' ') } : c)),
    };
    const published = createRedactor(defaultRedactionRules()).call(call);
    const text = JSON.stringify(published.changes);
    expect(text).not.toContain('hunter2');
    expect(text).toContain('-t nat -N CNI-f0063f9e4fe8a31f15d8166f');
  });
});

describe('the short count of a call\'s changes', () => {
  it('counts what was added and removed, rules and sysctls, and the refusals', () => {
    const [add, del, mtu] = bridgeCalls();
    expect(changeSummaryText(add!.changes!)).toBe('+2 links, 4 sysctls, +2 addrs, +1 route, 4 rules');
    expect(changeSummaryText(del!.changes!)).toBe('-1 link, 3 rules; 2 refused');
    expect(changeSummaryText(mtu!.changes!)).toBe('1 refused');
    expect(changeSummaryText([])).toBe('no changes');
  });
});
