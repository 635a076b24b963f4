/**
 * Capture modes with the real tracer: light mode records calls without
 * payloads; switching modes at runtime loses no call in flight and
 * duplicates none. And the daemon's own errors read as sentences.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');
const CLI = path.resolve(import.meta.dirname, '../../bin/cnirec.js');

const canRun = requirePrivilegedSuite();

describe.runIf(canRun)('light capture mode', () => {
  let daemon: RunningDaemon;
  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'light' });
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('records the call tree, exit codes and helpers but no payload bytes', async () => {
    const net = await createTestBridgeNetwork('cnirec-light');
    const ns = await withNetns('cnirec-light');
    try {
      const containerId = `light${Date.now().toString(16)}`;
      const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0' };
      expect((await execPlugin({ ...base, command: 'ADD', stdin: configBytes(net.config) })).exitCode).toBe(0);
      const shaper = await execPlugin({
        plugin: path.join(FIXTURE_PLUGINS, 'tc-shaper.sh'),
        command: 'ADD',
        containerId: `${containerId}-sh`,
        netns: ns.path,
        ifname: 'eth0',
        cniPath: FIXTURE_PLUGINS,
        stdin: configBytes({ cniVersion: '1.0.0', name: 'shaped', type: 'tc-shaper', device: 'lo' }),
      });
      expect(shaper.exitCode).toBe(0);
      const [add] = await daemon.waitFor('the light ADD', () => {
        const c = daemon.callsFor(containerId).filter((x) => x.plugin === 'bridge');
        return c.length > 0 ? c : null;
      });
      expect(add!.captureMode).toBe('light');
      expect(add!.exitCode).toBe(0);
      expect(add!.stdin.bytes.length).toBe(0);
      expect(add!.stdout.bytes.length).toBe(0);
      expect(daemon.store.childrenOf(add!.id).map((c) => c.plugin)).toEqual(['host-local']);
      const [sh] = await daemon.waitFor('the light shell plugin call', () => {
        const c = daemon.callsFor(`${containerId}-sh`);
        return c.length > 0 ? c : null;
      });
      expect(sh!.helpers.map((h) => path.basename(h.path))).toEqual(expect.arrayContaining(['cat', 'jq', 'tc']));
      await execPlugin({ ...base, command: 'DEL', stdin: configBytes(net.config) });
    } finally {
      await ns.remove();
      await net.cleanup();
    }
  });
});

describe.runIf(canRun)('switching capture mode at runtime', () => {
  let daemon: RunningDaemon;
  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'full' });
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  it('keeps the call in flight whole and records new calls in the new mode, each once', async () => {
    const containerId = `switch${Date.now().toString(16)}`;
    const slowConfig = configBytes({ cniVersion: '1.0.0', name: 'slow', type: 'slow.sh', seconds: 3 });
    const inFlight = execPlugin({
      plugin: path.join(FIXTURE_PLUGINS, 'slow.sh'),
      command: 'ADD',
      containerId: `${containerId}-slow`,
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      cniPath: FIXTURE_PLUGINS,
      stdin: slowConfig,
    });
    await daemon.waitFor('the slow call to start', (store) => store.listCalls({ containerId: `${containerId}-slow` }, 1).items[0]);

    const res = await fetch(`${daemon.url}/api/v1/tracer/mode`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'light' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { mode: string }).mode).toBe('light');

    const after = await execPlugin({
      plugin: path.join(FIXTURE_PLUGINS, 'echo.sh'),
      command: 'ADD',
      containerId: `${containerId}-after`,
      netns: '/var/run/netns/none',
      ifname: 'eth0',
      cniPath: FIXTURE_PLUGINS,
      stdin: 'hello',
    });
    expect(after.stdout.toString()).toBe('hello');
    const slow = await inFlight;
    expect(slow.exitCode).toBe(0);

    const [slowCall] = await daemon.waitFor('the slow call to finish', () => {
      const c = daemon.callsFor(`${containerId}-slow`);
      return c.length > 0 ? c : null;
    });
    expect(slowCall!.status).toBe('finished');
    expect(slowCall!.captureMode).toBe('full');
    expect(slowCall!.stdin.bytes.equals(slowConfig)).toBe(true);
    expect(slowCall!.stdout.bytes.equals(slow.stdout)).toBe(true);

    const [afterCall] = await daemon.waitFor('the call after the switch', () => {
      const c = daemon.callsFor(`${containerId}-after`);
      return c.length > 0 ? c : null;
    });
    expect(afterCall!.captureMode).toBe('light');
    expect(afterCall!.exitCode).toBe(0);
    expect(daemon.store.listCalls({ containerId: `${containerId}-slow` }, 10).items).toHaveLength(1);
    expect(daemon.store.listCalls({ containerId: `${containerId}-after` }, 10).items).toHaveLength(1);
  });
});

describe.runIf(canRun)('the daemon at the command line', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });

  it('says in one sentence that bpftrace is missing, with the install command, and no stack trace', () => {
    const res = run('run', '--bpftrace', '/nonexistent/bpftrace', '--db', '/tmp/cnirec-e2e-nobpf.db', '--listen', '127.0.0.1:0');
    expect(res.status).toBe(2);
    const out = res.stdout + res.stderr;
    expect(out).toContain('bpftrace was not found');
    expect(out).toContain('apt-get install -y bpftrace');
    expect(out).not.toMatch(/\n\s+at /);
  });

  it('rejects a bad setting naming the flag and its variable', () => {
    const res = run('run', '--capture', 'heavy');
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/--capture \(CNIREC_CAPTURE\)/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
