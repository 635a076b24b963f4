/**
 * The real daemon with real bpftrace records real plugin calls byte-exact.
 * Plugins are exec'd the way libcni does (argv = path, env, stdin pipe).
 */

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, withPrevResult } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('capture with the real tracer', () => {
  let daemon: RunningDaemon;

  beforeAll(async () => {
    daemon = await startDaemon();
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  const byCommand = (calls: StoredCall[], command: string, plugin: string) =>
    calls.filter((c) => c.command === command && c.plugin === plugin);

  it('records bridge ADD, CHECK and DEL with their host-local children byte-exact', async () => {
    const net = await createTestBridgeNetwork('cnirec-cap');
    const ns = await withNetns('cnirec-cap');
    try {
      const containerId = `cap${Date.now().toString(16)}`;
      const cniArgs = podCniArgs('shop', 'cart-7d9f', '1b4e28ba-2fa1-11d2-883f-0016d3cca427', containerId);
      const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', cniArgs };
      const addStdin = configBytes(net.config);
      const add = await execPlugin({ ...base, command: 'ADD', stdin: addStdin });
      expect(add.exitCode, add.stderr.toString()).toBe(0);
      const checkStdin = configBytes(withPrevResult(net.config, add.stdout));
      const check = await execPlugin({ ...base, command: 'CHECK', stdin: checkStdin });
      expect(check.exitCode, check.stdout.toString()).toBe(0);
      const del = await execPlugin({ ...base, command: 'DEL', stdin: addStdin });
      expect(del.exitCode).toBe(0);

      const calls = await daemon.waitFor('bridge DEL and its host-local child to be stored', () => {
        const all = daemon.callsFor(containerId);
        return all.length >= 6 ? all : null;
      });
      const [addCall] = byCommand(calls, 'ADD', 'bridge');
      const [checkCall] = byCommand(calls, 'CHECK', 'bridge');
      const [delCall] = byCommand(calls, 'DEL', 'bridge');
      for (const [call, sent, got] of [
        [addCall, addStdin, add.stdout],
        [checkCall, checkStdin, check.stdout],
        [delCall, addStdin, del.stdout],
      ] as const) {
        expect(call).toBeDefined();
        expect(call!.status).toBe('finished');
        expect(call!.exitCode).toBe(0);
        expect(call!.ok).toBe(true);
        expect(call!.stdin.bytes.equals(sent)).toBe(true);
        expect(call!.stdout.bytes.equals(got)).toBe(true);
        expect(call!.stdin.truncated).toBe(false);
        expect(call!.argv).toEqual([`${CNI_BIN_DIR}/bridge`]);
        expect(call!.podNamespace).toBe('shop');
        expect(call!.podName).toBe('cart-7d9f');
        expect(call!.podUid).toBe('1b4e28ba-2fa1-11d2-883f-0016d3cca427');
        expect(call!.netns).toBe(ns.path);
        expect(call!.ifname).toBe('eth0');
        expect(call!.parentId).toBeNull();
        expect(Object.keys(call!.env).every((k) => k.startsWith('CNI_'))).toBe(true);
      }
      // host-local is a delegated call of each bridge call, with its own stdin and stdout.
      const [ipamAdd] = byCommand(calls, 'ADD', 'host-local');
      expect(ipamAdd!.parentId).toBe(addCall!.id);
      expect(ipamAdd!.exitCode).toBe(0);
      expect(ipamAdd!.stdin.bytes.equals(addStdin)).toBe(true);
      const ipamResult = JSON.parse(ipamAdd!.stdout.bytes.toString()) as { ips: Array<{ address: string }> };
      const bridgeResult = JSON.parse(add.stdout.toString()) as { ips: Array<{ address: string }> };
      expect(ipamResult.ips[0]!.address).toBe(bridgeResult.ips[0]!.address);
      expect(byCommand(calls, 'DEL', 'host-local')[0]!.parentId).toBe(delCall!.id);
      expect(daemon.store.childrenOf(addCall!.id).map((c) => c.plugin)).toEqual(['host-local']);
    } finally {
      await ns.remove();
      await net.cleanup();
    }
  });

  it('records a failing call with its exit code and the CNI error JSON on stdout', async () => {
    const containerId = `fail${Date.now().toString(16)}`;
    const stdin = Buffer.from('{"cniVersion":"1.0.0","name":"broken","type":"bridge","ipam":{"type":"no-such-ipam"}}');
    const res = await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', stdin });
    expect(res.exitCode).not.toBe(0);
    const [call] = await daemon.waitFor('the failing call', () => {
      const c = daemon.callsFor(containerId);
      return c.length > 0 ? c : null;
    });
    expect(call!.exitCode).toBe(res.exitCode);
    expect(call!.ok).toBe(false);
    expect(call!.stdout.bytes.equals(res.stdout)).toBe(true);
    expect(JSON.parse(call!.stdout.bytes.toString())).toHaveProperty('msg');
    expect(daemon.store.listCalls({ failed: true, containerId }, 10).items.map((c) => c.id)).toEqual([call!.id]);
  });

  it('records a 48 KiB config whole and a payload that is not UTF-8 byte-exact', async () => {
    const net = await createTestBridgeNetwork('cnirec-big');
    const ns = await withNetns('cnirec-big');
    try {
      const containerId = `big${Date.now().toString(16)}`;
      const shell = JSON.stringify({ ...net.config, pad: '' });
      const big = Buffer.from(JSON.stringify({ ...net.config, pad: 'p'.repeat(48 * 1024 - shell.length) }));
      expect(big.length).toBe(48 * 1024);
      const add = await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'ADD', containerId, netns: ns.path, ifname: 'eth0', stdin: big });
      expect(add.exitCode, add.stderr.toString()).toBe(0);
      await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'DEL', containerId, netns: ns.path, ifname: 'eth0', stdin: big });

      const binary = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 151 + 7) % 256));
      const echo = await execPlugin({ plugin: path.join(FIXTURE_PLUGINS, 'echo.sh'), command: 'ADD', containerId: `${containerId}-bin`, netns: ns.path, ifname: 'eth0', cniPath: FIXTURE_PLUGINS, stdin: binary });
      expect(echo.stdout.equals(binary)).toBe(true);

      const [bigAdd] = await daemon.waitFor('the 48 KiB ADD', () => {
        const c = daemon.callsFor(containerId).filter((x) => x.command === 'ADD' && x.plugin === 'bridge');
        return c.length > 0 ? c : null;
      });
      expect(bigAdd!.stdin.bytes.length).toBe(big.length);
      expect(bigAdd!.stdin.bytes.equals(big)).toBe(true);
      expect(daemon.store.childrenOf(bigAdd!.id)[0]!.stdin.storedBytes).toBe(big.length);

      const [binCall] = await daemon.waitFor('the binary echo call', () => {
        const c = daemon.callsFor(`${containerId}-bin`);
        return c.length > 0 ? c : null;
      });
      expect(binCall!.stdin.bytes.equals(binary)).toBe(true);
      expect(binCall!.stdout.bytes.equals(binary)).toBe(true);
    } finally {
      await ns.remove();
      await net.cleanup();
    }
  });

  it('records a shell-script plugin: its full stdin although cat read it, and its helpers', async () => {
    const ns = await withNetns('cnirec-sh');
    try {
      const containerId = `sh${Date.now().toString(16)}`;
      const plugin = path.join(FIXTURE_PLUGINS, 'tc-shaper.sh');
      const stdin = configBytes({ cniVersion: '1.0.0', name: 'shaped', type: 'tc-shaper', device: 'lo', qdisc: 'tbf rate 2mbit burst 32kbit latency 400ms' });
      const base = { plugin, containerId, netns: ns.path, ifname: 'eth0', cniPath: `${FIXTURE_PLUGINS}:${CNI_BIN_DIR}` };
      const add = await execPlugin({ ...base, command: 'ADD', stdin });
      expect(add.exitCode, add.stdout.toString()).toBe(0);
      const [call] = await daemon.waitFor('the shell plugin ADD', () => {
        const c = daemon.callsFor(containerId);
        return c.length > 0 ? c : null;
      });
      expect(call!.plugin).toBe('tc-shaper.sh');
      expect(call!.exitCode).toBe(0);
      expect(call!.stdin.bytes.equals(stdin)).toBe(true);
      expect(call!.stdout.bytes.equals(add.stdout)).toBe(true);
      const helpers = call!.helpers.map((h) => path.basename(h.path));
      expect(helpers).toContain('cat');
      expect(helpers).toContain('jq');
      expect(helpers).toContain('tc');
      const tc = call!.helpers.find((h) => path.basename(h.path) === 'tc')!;
      expect(tc.argv).toEqual(['tc', 'qdisc', 'replace', 'dev', 'lo', 'root', 'tbf', 'rate', '2mbit', 'burst', '32kbit', 'latency', '400ms']);
      expect(tc.exitCode).toBe(0);
      expect(tc.endedAtUs).not.toBeNull();
      expect(daemon.store.listCalls({ containerId }, 10).items).toHaveLength(1);
      await execPlugin({ ...base, command: 'DEL', stdin });
    } finally {
      await ns.remove();
    }
  });

  it('links the delegates a daemon runs for a Multus thick-mode shim to the shim call', async () => {
    // The "daemon": a long-running shell, no CNI call, that runs the delegate (echo.sh) with the shim's
    // CNI_* variables and stdin whenever the shim asks, as multus-daemon does.
    const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-shim-'));
    execFileSync('mkfifo', [path.join(dir, 'request'), path.join(dir, 'reply')]);
    const delegate = path.join(FIXTURE_PLUGINS, 'echo.sh');
    const multusDaemon = spawn('bash', ['-c', `while read -r _ <"${dir}/request"; do env -i PATH=/usr/bin:/bin $(cat "${dir}/env") "${delegate}" <"${dir}/stdin" >"${dir}/reply"; done`], {
      stdio: 'ignore',
    });
    try {
      const containerId = `shim${Date.now().toString(16)}`;
      const stdin = configBytes({ cniVersion: '1.0.0', name: 'multus-cni-network', type: 'multus-shim', delegates: [{ type: 'echo' }] });
      const shim = await execPlugin({
        plugin: path.join(FIXTURE_PLUGINS, 'multus-shim'),
        command: 'ADD',
        containerId,
        netns: '/var/run/netns/cnirec-shim',
        ifname: 'eth0',
        cniArgs: podCniArgs('mesh', 'gw-0', 'uid-shim', containerId),
        cniPath: FIXTURE_PLUGINS,
        extraEnv: { SHIM_DAEMON_DIR: dir },
        stdin,
      });
      expect(shim.exitCode, shim.stderr.toString()).toBe(0);
      expect(shim.stdout.equals(stdin)).toBe(true);

      const calls = await daemon.waitFor('the shim and its delegate to be stored', () => {
        const all = daemon.callsFor(containerId).filter((c) => c.status === 'finished');
        return all.length >= 2 ? all : null;
      });
      const shimCall = calls.find((c) => c.plugin === 'multus-shim')!;
      const delegated = calls.find((c) => c.plugin === 'echo.sh')!;
      expect(shimCall.parentId).toBeNull();
      // The delegate's parent process is the daemon's shell, not the shim: linked by sandbox and time.
      expect(delegated.parentId).toBe(shimCall.id);
      expect(delegated.parentPid).not.toBe(shimCall.pid);
      expect(delegated.stdin.bytes.equals(stdin)).toBe(true);
      expect(daemon.store.childrenOf(shimCall.id).map((c) => c.id)).toEqual([delegated.id]);
    } finally {
      multusDaemon.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('records a plugin killed by SIGKILL as a complete call with the signal', async () => {
    const containerId = `kill${Date.now().toString(16)}`;
    const res = await execPlugin({
      plugin: path.join(FIXTURE_PLUGINS, 'sleeper.sh'),
      command: 'ADD',
      containerId,
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      cniPath: FIXTURE_PLUGINS,
      stdin: '{"cniVersion":"1.0.0","name":"slow","type":"sleeper.sh"}',
      killAfterMs: 300,
      signal: 'SIGKILL',
    });
    expect(res.signal).toBe('SIGKILL');
    const [call] = await daemon.waitFor('the killed call', () => {
      const c = daemon.callsFor(containerId);
      return c.length > 0 ? c : null;
    });
    expect(call!.status).toBe('finished');
    expect(call!.signal).toBe(9);
    expect(call!.exitCode).toBeNull();
    expect(call!.ok).toBe(false);
    expect(call!.stdin.bytes.toString()).toBe('{"cniVersion":"1.0.0","name":"slow","type":"sleeper.sh"}');
  });

  it('records 200 concurrent calls with 16 KiB configs complete, with no lost records', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'cnirec-burst-'));
    const prefix = `burst${Date.now().toString(16)}`;
    const configs = Array.from({ length: 200 }, (_, i) => {
      const conf = { cniVersion: '1.0.0', name: 'burst', ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.251.0.0/16' }]] }, note: `${i}-` };
      const pad = 16 * 1024 - Buffer.byteLength(JSON.stringify(conf));
      return Buffer.from(JSON.stringify({ ...conf, note: `${i}-${'n'.repeat(pad)}` }));
    });
    const results = await Promise.all(
      configs.map((stdin, i) =>
        execPlugin({ plugin: `${CNI_BIN_DIR}/host-local`, command: 'ADD', containerId: `${prefix}-${i}`, netns: '/var/run/netns/none', ifname: 'eth0', stdin }),
      ),
    );
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
    const stored = await daemon.waitFor(
      'all 200 burst calls',
      (store) => {
        const n = results.filter((_, i) => store.listCalls({ containerId: `${prefix}-${i}`, status: 'finished' }, 1).items.length === 1).length;
        return n === 200 ? n : null;
      },
      60_000,
    );
    expect(stored).toBe(200);
    for (let i = 0; i < 200; i += 37) {
      const [call] = daemon.callsFor(`${prefix}-${i}`);
      expect(call!.stdin.bytes.equals(configs[i]!)).toBe(true);
      expect(call!.stdout.bytes.equals(results[i]!.stdout)).toBe(true);
    }
    const health = (await (await fetch(`${daemon.url}/healthz`)).json()) as { tracer: { lostEvents: number } };
    expect(health.tracer.lostEvents).toBe(0);
  });
});
