/**
 * What a call changed in the kernel, with the real tracer and Debian's
 * plugins: a bridge ADD (isGateway, ipMasq, a default route) and its DEL,
 * each change compared with the kernel's own state read by `ip -j` and
 * `iptables-save` (never with cnirec's claims); and the bridge the kernel
 * refuses (mtu 70000): in full mode a failed link add with EINVAL and the
 * kernel's text, in light mode no changes (null) and the text in the
 * call's kernel messages, on the API and the CLI.
 */

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallDetail } from '../../api/index.js';
import { cnirec } from '../integration/cli-harness.js';
import { launchChromium, openPage } from './support/browser.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { allocTestSubnet, bridgeConfig, configBytes, makeIpamDataDir, removeLink, uniqueBridgeName, withNetns, type Netns } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const FORGETFUL = path.resolve(import.meta.dirname, 'fixtures/plugins/forgetful.sh');
const IPROUTE = path.resolve(import.meta.dirname, 'fixtures/plugins/iproute.sh');

const ipJson = <T>(args: string[]): T => JSON.parse(execFileSync('ip', ['-j', ...args], { encoding: 'utf8' }) || '[]') as T;
const natRules = (): string => execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' });
/** The kernel's nftables objects of a table (`nft -j list table`), or null when it has no such table. */
function nftTable(table: string, netns?: string): Array<Record<string, { name?: string; chain?: string; hook?: string }>> | null {
  try {
    const [cmd, args] = netns ? ['ip', ['netns', 'exec', netns, 'nft', '-j', 'list', 'table', 'inet', table]] : ['nft', ['-j', 'list', 'table', 'inet', table]];
    return (JSON.parse(execFileSync(cmd as string, args as string[], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as { nftables: Array<Record<string, { name?: string; chain?: string; hook?: string }>> }).nftables;
  } catch {
    return null;
  }
}

async function detail(daemon: RunningDaemon, containerId: string, command: string, plugin = 'bridge'): Promise<CallDetail> {
  const stored = await daemon.waitFor(`the ${command} of ${containerId}`, () => daemon.callsFor(containerId).find((c) => c.command === command && c.plugin === plugin));
  const res = await fetch(`${daemon.url}/api/v1/calls/${stored.id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as CallDetail;
}

const lines = (c: CallDetail): string[] => (c.changes ?? []).map((x) => `${x.netns} ${x.object} ${x.action} ${x.subject}`);

describe.runIf(canRun)('the kernel changes of a real bridge ADD and DEL (full capture)', () => {
  let daemon: RunningDaemon;
  let ns: Netns;
  const bridge = uniqueBridgeName('chg');
  let subnet: string;
  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'full' });
    ns = await withNetns('cnirec-chg');
    subnet = await allocTestSubnet();
  }, 120_000);
  /** DELs to run whatever happens: a failed assertion must not leave a chain or a veth behind. */
  const undo: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const u of undo) await u().catch(() => undefined);
    await daemon?.stop();
    await ns?.remove();
    await removeLink(bridge);
  });

  it('lists every change of the ADD as the kernel has it, and what the DEL removed', { timeout: 120_000 }, async () => {
    const config = { ...bridgeConfig({ name: `chg-${bridge}`, bridge, subnet, dataDir: makeIpamDataDir(), isGateway: true, ipMasq: true }) };
    const containerId = `chg-${bridge}-ctr`;
    const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', stdin: configBytes(config) };
    undo.push(() => execPlugin({ ...base, command: 'DEL' }));
    const add = await execPlugin({ ...base, command: 'ADD' });
    expect(add.exitCode, add.stderr.toString()).toBe(0);

    // The kernel's state after the ADD.
    const [podAddr] = ipJson<Array<{ addr_info: Array<{ family: string; local: string; prefixlen: number }> }>>(['-n', ns.name, 'addr', 'show', 'eth0']);
    const v4 = podAddr!.addr_info.find((a) => a.family === 'inet')!;
    const [route] = ipJson<Array<{ dst: string; gateway: string; dev: string }>>(['-n', ns.name, 'route', 'show', 'default']);
    const [hostEnd] = ipJson<Array<{ ifname: string }>>(['link', 'show', 'master', bridge]);
    // The call's chain: where its POSTROUTING rule (commented with its container id) jumps.
    const chain = natRules().split('\n').filter((l) => l.startsWith('-A POSTROUTING') && l.includes(`id: \\"${containerId}\\"`)).map((l) => / -j (CNI-[0-9a-f]+)/.exec(l)?.[1])[0];
    const masq = natRules().split('\n').find((l) => l.startsWith(`-A ${chain} `) && l.includes('MASQUERADE'));
    expect(chain && masq).toBeTruthy();

    const a = await detail(daemon, containerId, 'ADD');
    expect(a.captureMode).toBe('full');
    expect(lines(a)).toEqual(
      expect.arrayContaining([
        `host link add ${bridge} type bridge`,
        `${ns.path} link add eth0 type veth peer ${hostEnd!.ifname}`,
        `host link change ${hostEnd!.ifname} master ${bridge}`,
        `${ns.path} address add ${v4.local}/${v4.prefixlen} dev eth0`,
        `${ns.path} route add default via ${route!.gateway} dev ${route!.dev}`,
        `${ns.path} sysctl change net.ipv6.conf.eth0.accept_dad = 0`,
        `host sysctl change net.ipv6.conf.${hostEnd!.ifname}.accept_ra = 0`,
        `host iptables add -t nat -N ${chain}`,
      ]),
    );
    // iptables-save orders a rule's matches its own way: the same words, the -A first.
    const words = (rule: string) => rule.split(' ').sort();
    const masqChange = a.changes!.find((c) => c.object === 'iptables' && c.subject.startsWith(`-t nat -A ${chain} `) && c.subject.includes('MASQUERADE'));
    expect(words(masqChange!.subject.replace(/^-t nat /, ''))).toEqual(words(masq!));
    expect(a.changes!.every((c) => c.ok === true)).toBe(true);
    // Reads are not changes: the gets and iptables' --version, -S, -C.
    expect(lines(a).join('\n')).not.toMatch(/ (-S|-C|--version)( |$)/m);

    const del = await execPlugin({ ...base, command: 'DEL' });
    expect(del.exitCode, del.stderr.toString()).toBe(0);
    const d = await detail(daemon, containerId, 'DEL');
    expect(lines(d)).toEqual(expect.arrayContaining([`${ns.path} link delete eth0`, `host iptables delete -t nat -X ${chain}`]));
    // And the kernel agrees: the veth and the chain are gone.
    expect(ipJson<unknown[]>(['link', 'show', 'master', bridge])).toEqual([]);
    expect(natRules()).not.toContain(chain!);
  });

  it("lists a shell plugin's ip (sendmsg) and nft (a script on stdin, a rule in argv) changes as the kernel has them, in their netns", { timeout: 120_000 }, async () => {
    const table = `cnirec_${bridge}`;
    const addr = `${subnet.replace(/\.0\/24$/, '.77')}/24`;
    const containerId = `ipr-${bridge}-ctr`;
    const base = { plugin: IPROUTE, containerId, netns: ns.path, ifname: 'ipr0', stdin: configBytes({ cniVersion: '1.0.0', name: `ipr-${bridge}`, type: 'iproute', address: addr, table }) };
    undo.push(() => execPlugin({ ...base, command: 'DEL' }));
    const add = await execPlugin({ ...base, command: 'ADD' });
    expect(add.exitCode, add.stdout.toString() + add.stderr.toString()).toBe(0);

    // The kernel's state after the ADD: the link (its kind and peer), its address and flags, the nft table.
    const [link] = ipJson<Array<{ ifname: string; flags: string[]; link?: string; linkinfo: { info_kind: string } }>>(['-n', ns.name, '-d', 'link', 'show', 'ipr0']);
    const [peer] = ipJson<Array<{ ifname: string }>>(['-n', ns.name, 'link', 'show', 'ipr0p']);
    const [a] = ipJson<Array<{ addr_info: Array<{ family: string; local: string; prefixlen: number }> }>>(['-n', ns.name, 'addr', 'show', 'ipr0']);
    const v4 = a!.addr_info.find((x) => x.family === 'inet')!;
    expect(link!.flags).toContain('UP');
    const objects = nftTable(table)!;
    const chains = objects.filter((o) => o.chain).map((o) => o.chain!);
    const rules = objects.filter((o) => o.rule).map((o) => o.rule!);
    expect(chains.map((c) => [c.name, c.hook])).toEqual([['input', 'input']]);
    expect(nftTable(`${table}_pod`, ns.name)).not.toBeNull();
    expect(nftTable(`${table}_pod`)).toBeNull();

    const c = await detail(daemon, containerId, 'ADD', 'iproute.sh');
    expect(lines(c)).toEqual(
      expect.arrayContaining([
        `${ns.path} link add ${link!.ifname} type ${link!.linkinfo.info_kind} peer ${peer!.ifname}`,
        `${ns.path} address add ${v4.local}/${v4.prefixlen} dev ${link!.ifname}`,
        `${ns.path} link change ${link!.ifname} up`,
        `host nftables add add table inet ${table}`,
        `host nftables add add chain inet ${table} input { type filter hook input priority 0; policy accept; }`,
        `host nftables add add rule inet ${table} input ip saddr ${v4.local} counter accept`,
        `host nftables add add rule inet ${table} input tcp dport 9 drop`,
        // nsenter --net=<CNI_NETNS> exec'd nft in place: its change is the pod's.
        `${ns.path} nftables add add table inet ${table}_pod`,
      ]),
    );
    // One change per rule the kernel has in the chain; the ip lookups (gets) are no changes.
    expect(c.changes!.filter((x) => x.subject.startsWith(`add rule inet ${table} input `))).toHaveLength(rules.length);
    expect(c.changes!.filter((x) => x.object === 'link' || x.object === 'address')).toHaveLength(3);
    expect(c.changes!.every((x) => x.ok === true)).toBe(true);

    const del = await execPlugin({ ...base, command: 'DEL' });
    expect(del.exitCode).toBe(0);
    const d = await detail(daemon, containerId, 'DEL', 'iproute.sh');
    expect(lines(d)).toEqual([`${ns.path} link delete ipr0`, `${ns.path} nftables delete delete table inet ${table}_pod`, `host nftables delete delete table inet ${table}`]);
    // And the kernel agrees: the link and the table are gone.
    expect(ipJson<unknown[]>(['-n', ns.name, 'link', 'show']).some((l) => (l as { ifname: string }).ifname === 'ipr0')).toBe(false);
    expect(nftTable(table)).toBeNull();
    expect(nftTable(`${table}_pod`, ns.name)).toBeNull();
  });

  it('tells the refused bridge: a failed link add with EINVAL and the kernel text, and the error line says it', { timeout: 60_000 }, async () => {
    const refused = uniqueBridgeName('mtu');
    const config = { ...bridgeConfig({ name: `mtu-${refused}`, bridge: refused, subnet, dataDir: makeIpamDataDir() }), mtu: 70000 };
    const containerId = `mtu-${refused}-ctr`;
    const r = await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth1', stdin: configBytes(config), command: 'ADD' });
    expect(r.exitCode).toBe(1);
    expect(r.stdout.toString()).toContain('invalid argument');
    expect(ipJson<unknown[]>(['link', 'show']).some((l) => (l as { ifname: string }).ifname === refused)).toBe(false);
    const c = await detail(daemon, containerId, 'ADD');
    expect(c.changes).toEqual([
      expect.objectContaining({ netns: 'host', object: 'link', action: 'add', subject: `${refused} type bridge mtu 70000`, ok: false, error: { errno: 'EINVAL', message: 'mtu greater than device maximum' } }),
    ]);
    expect(c.kernelMessages.map((m) => m.message)).toEqual(['mtu greater than device maximum']);
    expect(c.error).toContain('(kernel: mtu greater than device maximum)');
  });
  it('raises left-behind for what a DEL forgot (the veth and the chain, naming the ADD), ends it once they are removed by hand; a clean ADD/DEL raises none', { timeout: 180_000 }, async () => {
    type Finding = { kind: string; containerId: string | null; callId: string | null; message: string };
    const open = async (): Promise<Finding[]> => ((await (await fetch(`${daemon.url}/api/v1/findings?kind=left-behind`)).json()) as { items: Finding[] }).items;
    const config = bridgeConfig({ name: `lb-${bridge}`, bridge, subnet, dataDir: makeIpamDataDir(), isGateway: true, ipMasq: true });
    const containerId = `lb-${bridge}-ctr`;
    const base = { plugin: FORGETFUL, cniPath: `${CNI_BIN_DIR}:${path.dirname(FORGETFUL)}`, containerId, netns: ns.path, ifname: 'eth2', stdin: configBytes(config) };
    // The real DEL, whatever happens: what the forgetful one leaves must not outlive the test.
    undo.push(() => execPlugin({ ...base, plugin: `${CNI_BIN_DIR}/bridge`, command: 'DEL' }));
    expect((await execPlugin({ ...base, command: 'ADD' })).exitCode).toBe(0);
    const [hostEnd] = ipJson<Array<{ ifname: string }>>(['link', 'show', 'master', bridge]);
    expect((await execPlugin({ ...base, command: 'DEL' })).exitCode).toBe(0);
    // The top-level ADD (its delegates, host-local among them, are ADD calls too, and may be stored first).
    const add = await daemon.waitFor('the forgetful ADD', () => daemon.callsFor(containerId).find((c) => c.command === 'ADD' && c.parentId === null));

    const found = await pollFor(async () => (await open()).find((f) => f.containerId === containerId), 60_000);
    expect(found.callId).toBe(add.id);
    expect(found.message).toContain(`link eth2 (${ns.path}) and its veth peer ${hostEnd!.ifname}`);
    expect(found.message).toMatch(/iptables chain nat\/CNI-[0-9a-f]+/);
    // The clean bridge ADD/DEL of the first test raised none.
    expect((await open()).filter((f) => f.containerId?.startsWith('chg-'))).toEqual([]);

    // Removed by hand (the real bridge DEL): the finding ends.
    expect((await execPlugin({ ...base, plugin: `${CNI_BIN_DIR}/bridge`, command: 'DEL' })).exitCode).toBe(0);
    await pollFor(async () => ((await open()).some((f) => f.containerId === containerId) ? null : true), 60_000);
  });
});

async function pollFor<T>(probe: () => Promise<T | null | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.runIf(canRun)('the refused bridge in light capture', () => {
  let daemon: RunningDaemon;
  let ns: Netns;
  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'light' });
    ns = await withNetns('cnirec-chgl');
  }, 120_000);
  afterAll(async () => {
    await daemon?.stop();
    await ns?.remove();
  });

  it('keeps no changes (null, not "none") but the kernel text, on the API, the CLI and the web view (Chromium)', { timeout: 60_000 }, async () => {
    const refused = uniqueBridgeName('mtl');
    const config = { ...bridgeConfig({ name: `mtl-${refused}`, bridge: refused, subnet: await allocTestSubnet(), dataDir: makeIpamDataDir() }), mtu: 70000 };
    const containerId = `mtl-${refused}-ctr`;
    const r = await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', stdin: configBytes(config), command: 'ADD' });
    expect(r.exitCode).toBe(1);
    const c = await detail(daemon, containerId, 'ADD');
    expect(c.captureMode).toBe('light');
    expect(c.changes).toBeNull();
    expect(c.kernelMessages).toEqual([expect.objectContaining({ process: 'bridge', message: 'mtu greater than device maximum' })]);
    const shown = (await cnirec(['show', c.id], { api: daemon.url })).stdout;
    expect(shown).toContain('changes  (not captured: light capture)');
    expect(shown).toMatch(/kernel {3}bridge\[\d+\]: mtu greater than device maximum/);

    // The web view, in Chromium: the call page says changes were not captured, and what the kernel said.
    const browser = await launchChromium();
    try {
      const watched = await openPage(browser);
      await watched.page.goto(`${daemon.url}/ui/calls/${c.id}`);
      await watched.page.locator('.changes-none').waitFor({ timeout: 15_000 });
      const text = await watched.page.locator('.call-page').innerText();
      expect(text).toContain('Not captured: this call was recorded in light mode');
      expect(text).toContain('mtu greater than device maximum');
      expect(await watched.page.locator('.kernel-messages li').innerText()).toMatch(/bridge \(pid \d+\): mtu greater than device maximum/);
      expect(watched.problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
