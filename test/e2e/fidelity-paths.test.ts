/**
 * The real daemon with real bpftrace records the path a plugin was exec'd
 * from as the kernel resolved it: a path longer than bpftrace's strings
 * whole (the tracer's N lines), and a delegate exec'd by a relative path
 * (`./host-local`, a relative PATH or CNI_PATH entry) as the delegated call
 * it is, under its absolute path (the tracer's C lines: the working
 * directory). Each is compared with what the caller sent and received.
 */

import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, type ExecPluginResult } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const RELATIVE_DELEGATE = path.resolve(import.meta.dirname, 'fixtures/plugins/relative-delegate.sh');
const HOST_LOCAL = `${CNI_BIN_DIR}/host-local`;

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('the paths of plugins, with the real tracer', () => {
  let daemon: RunningDaemon;
  let dataDir: string;
  let seq = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-paths-'));
    daemon = await startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** host-local's config: an address from a test range, its reservations in a temp dir (no network needed). */
  const ipamConfig = (subnet: string) =>
    Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: `paths-${subnet.split('.')[2]}`, ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir } }));

  const newContainerId = (what: string) => `${what}${Date.now().toString(16)}${seq++}`;

  /** Waits for `count` finished calls of the container (a delegate is published before its parent). */
  const finishedCalls = (containerId: string, count: number) =>
    daemon.waitFor(`${count} finished call(s) of ${containerId}`, () => {
      const calls = daemon.callsFor(containerId);
      return calls.length >= count && calls.every((c) => c.status === 'finished') ? calls : null;
    });

  it('records a plugin at a path over 300 bytes under its whole path and name, whatever its argv[0]', async () => {
    // Three long directory names (a name may have 255 bytes) under the temp dir; host-local linked in.
    const dir = path.join(dataDir, ...['a', 'b', 'c'].map((c) => `${c}-${'long-directory-name-'.repeat(5)}${c}`));
    mkdirSync(dir, { recursive: true });
    const plugin = path.join(dir, 'host-local');
    symlinkSync(HOST_LOCAL, plugin);
    expect(Buffer.byteLength(plugin)).toBeGreaterThan(300);
    const containerId = newContainerId('long');
    const stdin = ipamConfig('10.99.21.0/24');
    // argv[0] is no path: the record's path can only come from the tracer.
    const res = await execPlugin({ plugin, argv0: 'ipam', command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: dir, stdin });
    expect(res.exitCode, res.stderr.toString()).toBe(0);
    const [call] = await finishedCalls(containerId, 1);
    expect(call).toMatchObject({ path: plugin, plugin: 'host-local', pathTruncated: false, argv: ['ipam'], exitCode: 0, pid: res.pid });
    expectBytes(call!, res);
    expect(daemon.store.listCalls({ containerId }, 10).items.map((c) => [c.path, c.plugin])).toEqual([[plugin, 'host-local']]);
  });

  /** The shell plugin's call and its one delegated host-local call, each byte-exact. */
  async function expectRelativeDelegate(res: ExecPluginResult, containerId: string, sent: Buffer): Promise<void> {
    expect(res.exitCode, res.stderr.toString()).toBe(0);
    const calls = await finishedCalls(containerId, 2);
    expect(calls).toHaveLength(2);
    const parent = calls.find((c) => c.pid === res.pid)!;
    const child = calls.find((c) => c.pid !== res.pid)!;
    expect(parent).toMatchObject({ plugin: 'relative-delegate.sh', path: RELATIVE_DELEGATE, parentId: null, exitCode: 0 });
    expectBytes(parent, res);
    expect(child).toMatchObject({ plugin: 'host-local', path: HOST_LOCAL, parentId: parent.id, command: 'ADD', containerId, exitCode: 0 });
    expect(child.stdin.bytes.equals(sent)).toBe(true);
    expect(child.stdout.bytes.equals(res.stdout)).toBe(true);
    expect(JSON.parse(child.stdout.bytes.toString())).toHaveProperty('ips');
    // The delegate is a call of its own, not a helper of its parent; the parent's helpers are its shell tools.
    expect(daemon.store.childrenOf(parent.id).map((c) => c.plugin)).toEqual(['host-local']);
    expect(parent.helpers.map((h) => path.basename(h.path))).not.toContain('host-local');
    expect(parent.helpers.map((h) => path.basename(h.path))).toEqual(expect.arrayContaining(['mktemp', 'cat']));
  }

  /** Runs the relative-delegate plugin for a new container with the delegate's environment; checks the record. */
  async function runRelativeDelegate(name: string, subnet: string, delegateEnv: Record<string, string>): Promise<void> {
    const containerId = newContainerId(name);
    const stdin = ipamConfig(subnet);
    const res = await execPlugin({ plugin: RELATIVE_DELEGATE, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', stdin, extraEnv: delegateEnv });
    await expectRelativeDelegate(res, containerId, stdin);
  }

  it('records `./host-local` run from its CNI_PATH directory as a delegated call under its absolute path', async () => {
    await runRelativeDelegate('dot', '10.99.22.0/24', { DELEGATE_DIR: CNI_BIN_DIR, DELEGATE: './host-local' });
  });

  it('records `host-local` found through a relative PATH entry the same way', async () => {
    // From /usr, PATH=lib/cni: the shell execs `lib/cni/host-local`.
    await runRelativeDelegate('relpath', '10.99.23.0/24', { DELEGATE_DIR: '/usr', DELEGATE_PATH: 'lib/cni', DELEGATE: 'host-local' });
  });

  it('records the real bridge’s host-local, found through a relative CNI_PATH entry, as its delegated call', async () => {
    const net = await createTestBridgeNetwork('cnirec-rel');
    const ns = await withNetns('cnirec-rel');
    try {
      const containerId = newContainerId('bridge');
      const stdin = configBytes(net.config);
      // libcni joins the entry as written: bridge execs `lib/cni/host-local` from /usr.
      const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', cniPath: 'lib/cni', cwd: '/usr', stdin };
      const add = await execPlugin({ ...base, command: 'ADD' });
      expect(add.exitCode, add.stderr.toString()).toBe(0);
      const calls = await finishedCalls(containerId, 2);
      const bridge = calls.find((c) => c.plugin === 'bridge')!;
      const ipam = calls.find((c) => c.pid !== add.pid)!;
      expect(bridge).toMatchObject({ path: `${CNI_BIN_DIR}/bridge`, parentId: null, exitCode: 0 });
      expectBytes(bridge, add);
      expect(ipam).toMatchObject({ plugin: 'host-local', path: HOST_LOCAL, parentId: bridge.id, command: 'ADD', exitCode: 0 });
      expect(ipam.stdin.bytes.equals(stdin)).toBe(true);
      const ipamResult = JSON.parse(ipam.stdout.bytes.toString()) as { ips: Array<{ address: string }> };
      expect(ipamResult.ips[0]!.address).toBe((JSON.parse(add.stdout.toString()) as { ips: Array<{ address: string }> }).ips[0]!.address);
      expect(bridge.helpers.map((h) => path.basename(h.path))).not.toContain('host-local');
      const del = await execPlugin({ ...base, command: 'DEL' });
      expect(del.exitCode, del.stderr.toString()).toBe(0);
    } finally {
      await ns.remove();
      await net.cleanup();
    }
  });
});

function expectBytes(call: StoredCall, res: ExecPluginResult): void {
  expect(call.stdin.bytes.equals(res.stdinBytes)).toBe(true);
  expect(call.stdout.bytes.equals(res.stdout)).toBe(true);
}
