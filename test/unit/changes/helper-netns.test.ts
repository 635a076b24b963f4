import { describe, expect, it } from 'vitest';
import { callChanges } from '../../../collector/changes/index.js';
import type { HelperProcess } from '../../../collector/types.js';

const stream = { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false };
let nextPid = 500;
const helper = (path: string, argv: string[], pid = nextPid++, ppid = 1): HelperProcess => ({
  pid,
  ppid,
  path,
  argv,
  startedAtUs: pid,
  endedAtUs: pid + 1,
  outcome: { exitCode: 0, signal: null, coreDumped: false },
  stdout: stream,
  stderr: stream,
});
const names = { host: '1', pod: '2', podPath: '/run/netns/pod-a' };
const where = (helpers: HelperProcess[]) => callChanges([], helpers, names).map((c) => `${c.netns} ${c.object} ${c.subject}`);

describe("the netns of a helper's changes", () => {
  it("is the one nsenter --net=<path> entered before it exec'd the helper in place (the pod's, by its CNI_NETNS path)", () => {
    const ns = helper('/usr/bin/nsenter', ['nsenter', '--net=/run/netns/pod-a', 'iptables', '-A', 'INPUT', '-j', 'ACCEPT'], 600);
    const ipt = helper('/usr/sbin/iptables', ['iptables', '-A', 'INPUT', '-j', 'ACCEPT'], 600);
    expect(where([ns, ipt])).toEqual(['/run/netns/pod-a iptables -A INPUT -j ACCEPT']);
  });

  it('is the named netns of `ip netns exec`, for a helper it ran or forked (/var/run and /run the same)', () => {
    const ip = helper('/usr/sbin/ip', ['ip', 'netns', 'exec', 'pod-a', 'sh', '-c', 'nft add table inet t'], 700);
    const nft = helper('/usr/sbin/nft', ['nft', 'add', 'table', 'inet', 't'], 701, 700);
    const other = helper('/usr/sbin/ip', ['ip', 'netns', 'exec', 'other', 'nft', 'delete', 'table', 'inet', 'u'], 702);
    const nft2 = helper('/usr/sbin/nft', ['nft', 'delete', 'table', 'inet', 'u'], 702);
    expect(where([ip, nft, other, nft2])).toEqual(['/run/netns/pod-a nftables add table inet t', '/var/run/netns/other nftables delete table inet u']);
  });

  it("is the host's for a helper nothing moved, and for an nsenter that names no path (-t <pid> -n)", () => {
    const ns = helper('/usr/bin/nsenter', ['nsenter', '-t', '1', '-n', 'iptables', '-N', 'X'], 800);
    const ipt = helper('/usr/sbin/iptables', ['iptables', '-N', 'X'], 800);
    expect(where([ns, ipt, helper('/usr/sbin/iptables', ['iptables', '-N', 'Y'])]).sort()).toEqual(['host iptables -N X', 'host iptables -N Y']);
  });
});
