/**
 * The real daemon with real bpftrace records a call's process tree as it
 * was: wrappers that exec the real plugin in place are one call named after
 * it, descendants that outlive the plugin stay its helpers, and what the
 * caller received is what the record says.
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { CNI_BIN_DIR, execPlugin, type ExecPluginOptions, type ExecPluginResult } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');
const HOST_LOCAL = `${CNI_BIN_DIR}/host-local`;
const CNI_PATH = `${FIXTURE_PLUGINS}:${CNI_BIN_DIR}`;

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('the process tree of a call, with the real tracer', () => {
  let daemon: RunningDaemon;
  let dataDir: string;
  let seq = 0;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-tree-'));
    daemon = await startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** host-local's config: an address from a test range, its reservations in a temp dir (no network needed). */
  const ipamConfig = (subnet: string) =>
    Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: `tree-${subnet.split('.')[2]}`, ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir } }));

  const newContainerId = (what: string) => `${what}${Date.now().toString(16)}${seq++}`;

  /** Runs a call and waits for exactly one stored call of its container. */
  async function callOnce(opts: Omit<ExecPluginOptions, 'containerId' | 'netns' | 'ifname'> & { what: string }): Promise<{ res: ExecPluginResult; call: StoredCall; containerId: string }> {
    const containerId = newContainerId(opts.what);
    const res = await execPlugin({ netns: '/var/run/netns/none', ifname: 'eth0', cniPath: CNI_PATH, ...opts, containerId });
    const [call] = await daemon.waitFor(`the ${opts.what} call`, () => {
      const calls = daemon.callsFor(containerId);
      return calls.length > 0 ? calls : null;
    });
    return { res, call: call!, containerId };
  }

  const expectOneHostLocalAdd = (res: ExecPluginResult, call: StoredCall, chain: readonly string[], argv: readonly string[], containerId: string) => {
    expect(res.exitCode, res.stderr.toString()).toBe(0);
    expect(daemon.callsFor(containerId)).toHaveLength(1);
    expect(call.status).toBe('finished');
    expect(call.plugin).toBe('host-local');
    expect(call.path).toBe(HOST_LOCAL);
    expect(call.argv).toEqual(argv);
    expect(call.execChain).toEqual(chain);
    expect(call.exitCode).toBe(0);
    expect(call.pid).toBe(res.pid);
    expect(call.stdin.bytes.equals(res.stdinBytes)).toBe(true);
    expect(call.stdout.bytes.equals(res.stdout)).toBe(true);
    expect(JSON.parse(call.stdout.bytes.toString())).toHaveProperty('ips');
  };

  it('records a bash wrapper that execs the real plugin by its path as one call named after the plugin', async () => {
    const wrapper = path.join(FIXTURE_PLUGINS, 'exec-wrapper.sh');
    const stdin = ipamConfig('10.99.11.0/24');
    const { res, call, containerId } = await callOnce({ what: 'wrap-abs', plugin: wrapper, command: 'ADD', stdin, extraEnv: { WRAP_TARGET: HOST_LOCAL } });
    expectOneHostLocalAdd(res, call, [wrapper, HOST_LOCAL], [HOST_LOCAL], containerId);
    expect(call.durationUs).toBeGreaterThan(0);
    // The stored row, not only the live one, says host-local: the finish rewrote the started row's names.
    expect(daemon.store.listCalls({ containerId }, 10).items.map((c) => c.plugin)).toEqual(['host-local']);
    await execPlugin({ plugin: wrapper, command: 'DEL', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: CNI_PATH, stdin, extraEnv: { WRAP_TARGET: HOST_LOCAL } });
  });

  it('records `exec host-local` through PATH the same way', async () => {
    const wrapper = path.join(FIXTURE_PLUGINS, 'exec-wrapper.sh');
    const { res, call, containerId } = await callOnce({ what: 'wrap-path', plugin: wrapper, command: 'ADD', stdin: ipamConfig('10.99.12.0/24'), extraEnv: { WRAP_TARGET: 'host-local' } });
    // bash passes the name it was given as argv[0].
    expectOneHostLocalAdd(res, call, [wrapper, HOST_LOCAL], ['host-local'], containerId);
  });

  it("records `sh -c 'exec …'` as one call of the plugin", async () => {
    const { res, call, containerId } = await callOnce({ what: 'sh-c', plugin: '/bin/sh', args: ['-c', `exec ${HOST_LOCAL}`], command: 'ADD', stdin: ipamConfig('10.99.13.0/24') });
    expectOneHostLocalAdd(res, call, ['/bin/sh', HOST_LOCAL], [HOST_LOCAL], containerId);
  });

  it('records an exec from a second thread as one call of the plugin, ending with the process', async () => {
    const wrapper = path.join(FIXTURE_PLUGINS, 'thread-exec.pl');
    const { res, call, containerId } = await callOnce({ what: 'thread', plugin: wrapper, command: 'ADD', stdin: ipamConfig('10.99.14.0/24'), extraEnv: { WRAP_TARGET: HOST_LOCAL } });
    expectOneHostLocalAdd(res, call, [wrapper, HOST_LOCAL], [HOST_LOCAL], containerId);
  });

  it('keeps a background child that outlives the plugin a helper of its call, with the output it wrote after the exit', async () => {
    const plugin = path.join(FIXTURE_PLUGINS, 'bg-child.sh');
    const containerId = newContainerId('bg');
    // The caller waits for the pipes, which the background child holds for 3 s after the plugin exits.
    const res = await execPlugin({ plugin, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: CNI_PATH, stdin: '{"cniVersion":"1.0.0","name":"bg"}', drainTimeoutMs: 15_000 });
    expect(res.exitCode).toBe(0);
    expect(res.stderr.toString()).toMatch(/^early: 34 bytes of config\nlate\n$/);
    const call = await daemon.waitFor('the call with the late output', () => {
      const [c] = daemon.callsFor(containerId);
      return c && c.stderr.bytes.equals(res.stderr) && c.helpers.every((h) => h.endedAtUs !== null) ? c : null;
    });
    expect(daemon.store.listCalls({ containerId }, 10).items).toHaveLength(1);
    expect(call.plugin).toBe('bg-child.sh');
    expect(call.exitCode).toBe(0);
    // The call ended with the plugin, not with its child 3 s later.
    expect(call.durationUs!).toBeLessThan(2_000_000);
    expect(call.stdout.bytes.equals(res.stdout)).toBe(true);
    expect(call.stderrAfterExitOffset).toBe(res.stderr.indexOf('late\n'));
    expect(call.stdoutAfterExitOffset).toBeNull();
    const sleep = call.helpers.find((h) => path.basename(h.path) === 'sleep');
    expect(sleep, JSON.stringify(call.helpers.map((h) => h.path))).toBeDefined();
    expect(sleep!.exitCode).toBe(0);
    expect(sleep!.endedAtUs).not.toBeNull();
    expect(daemon.store.listCalls({ plugin: 'sleep' }, 10).items).toHaveLength(0);
  });

  it('keeps a daemon-like grandchild, re-parented before it execs anything, a helper of its call', async () => {
    const plugin = path.join(FIXTURE_PLUGINS, 'daemon-child.sh');
    const containerId = newContainerId('daemon');
    const res = await execPlugin({ plugin, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: CNI_PATH, stdin: '{"cniVersion":"1.0.0","name":"d"}' });
    expect(res.exitCode).toBe(0);
    const call = await daemon.waitFor('the daemon child’s helpers on the call', () => {
      const [c] = daemon.callsFor(containerId);
      return c && c.helpers.some((h) => path.basename(h.path) === 'ip' && h.endedAtUs !== null) ? c : null;
    });
    expect(call.durationUs!).toBeLessThan(1_000_000);
    expect(call.stdout.bytes.equals(res.stdout)).toBe(true);
    expect(call.helpers.filter((h) => h.endedAtUs === null)).toEqual([]);
    expect(daemon.store.listCalls({ containerId }, 10).items).toHaveLength(1);
    for (const name of ['ip', 'sleep']) expect(daemon.store.listCalls({ plugin: name }, 10).items).toHaveLength(0);
  });

  it('trims CNI_ARGS keys and values, for ADD and for a VERSION probe', async () => {
    const plugin = path.join(FIXTURE_PLUGINS, 'trivial.sh');
    const cniArgs = ' K8S_POD_NAMESPACE =ns ; K8S_POD_NAME= web-0 ;IgnoreUnknown=1';
    for (const command of ['ADD', 'VERSION']) {
      const containerId = newContainerId(`args-${command.toLowerCase()}`);
      const res = await execPlugin({ plugin, command, containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: CNI_PATH, cniArgs, stdin: '{"cniVersion":"1.0.0","name":"a"}' });
      expect(res.exitCode).toBe(0);
      // A VERSION call is a probe: lists leave it out unless asked.
      const [call] = await daemon.waitFor(`the ${command} call`, () => {
        const calls = daemon.callsFor(containerId, { includeVersion: true });
        return calls.length > 0 ? calls : null;
      });
      expect(call!.command).toBe(command);
      expect(call!.isVersionProbe).toBe(command === 'VERSION');
      expect(call!.cniArgs).toBe(cniArgs);
      expect([call!.podNamespace, call!.podName]).toEqual(['ns', 'web-0']);
    }
  });

  it('finds CNI_COMMAND after 300 other variables, and keeps none of them', async () => {
    // A runtime or Multus running in a pod inherits seven variables per Service: hundreds come before CNI_*.
    // `env -i` execs the plugin with exactly this environment, in this order.
    const containerId = newContainerId('bigenv');
    const fillers = Array.from({ length: 300 }, (_, i) => `SVC_${i}_SERVICE_HOST=10.96.${i >> 8}.${i & 255}`);
    const cni = [`CNI_COMMAND=ADD`, `CNI_CONTAINERID=${containerId}`, 'CNI_NETNS=/var/run/netns/none', 'CNI_IFNAME=eth0', `CNI_PATH=${CNI_BIN_DIR}`, 'CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=big;K8S_POD_NAME=env'];
    const config = ipamConfig('10.77.3.0/24');
    const child = spawn('/usr/bin/env', ['-i', ...fillers, ...cni, HOST_LOCAL], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
    const out: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stdin.end(config);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code, Buffer.concat(out).toString()).toBe(0);
    const [call] = await daemon.waitFor('the call with a big environment', () => {
      const calls = daemon.callsFor(containerId);
      return calls.length > 0 ? calls : null;
    });
    expect(call).toMatchObject({ command: 'ADD', plugin: 'host-local', containerId, podNamespace: 'big', podName: 'env', exitCode: 0 });
    expect(call!.stdin.bytes.equals(config)).toBe(true);
    expect(call!.stdout.bytes.equals(Buffer.concat(out))).toBe(true);
    expect(Object.keys(call!.env).every((k) => k.startsWith('CNI_'))).toBe(true);
  });
});
