/**
 * The v1 contract against the real daemon fed by real captured calls: REST
 * filters and pagination, the pod story, the live tail, and a replay script
 * that reproduces the recorded result in a fresh network namespace.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const CLI = path.resolve(import.meta.dirname, '../../bin/cnirec.js');

interface Summary {
  id: string;
  command: string;
  plugin: string;
  exitCode: number | null;
  ok: boolean | null;
  parentId: string | null;
  pod: { namespace: string; name: string } | null;
  containerId: string | null;
  durationMs: number | null;
}

describe.runIf(canRun)('the v1 API of a recording daemon', () => {
  let daemon: RunningDaemon;
  let net: TestBridgeNetwork;
  const ns = `api-e2e-${Date.now().toString(36)}`;
  const get = async <T>(route: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${daemon.url}${route}`);
    return { status: res.status, body: (await res.json()) as T };
  };

  beforeAll(async () => {
    daemon = await startDaemon();
    net = await createTestBridgeNetwork('cnirec-api');
    // Three pods: ADD then DEL each (bridge + host-local), plus one failing call.
    for (const name of ['web-0', 'web-1', 'db-0']) {
      const netns = await withNetns('cnirec-api');
      const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId: `${ns}-${name}`, netns: netns.path, ifname: 'eth0', cniArgs: podCniArgs(ns, name, `uid-${name}`, `${ns}-${name}`) };
      expect((await execPlugin({ ...base, command: 'ADD', stdin: configBytes(net.config) })).exitCode).toBe(0);
      expect((await execPlugin({ ...base, command: 'DEL', stdin: configBytes(net.config) })).exitCode).toBe(0);
      await netns.remove();
    }
    await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'ADD', containerId: `${ns}-bad`, netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, 'bad-0', 'uid-bad', `${ns}-bad`), stdin: '{"cniVersion":"1.0.0","name":"x","type":"bridge","ipam":{"type":"nope"}}' });
    await daemon.waitFor('all pods stored', (store) => (store.listCalls({ namespace: ns, status: 'finished' }, 100).items.length >= 13 ? true : null), 20_000);
  });
  afterAll(async () => {
    await net?.cleanup();
    await daemon?.stop();
  });

  it('filters calls by pod, command, plugin, failure and time', async () => {
    const byPod = await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&pod=web-1`);
    expect(byPod.body.items.map((c) => `${c.command} ${c.plugin}`).sort()).toEqual(['ADD bridge', 'ADD host-local', 'DEL bridge', 'DEL host-local']);
    const dels = await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&command=DEL&plugin=bridge`);
    expect(dels.body.items).toHaveLength(3);
    const failed = await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&failed=true`);
    expect(failed.body.items.map((c) => c.containerId)).toEqual([`${ns}-bad`]);
    expect(failed.body.items[0]!.exitCode).not.toBe(0);
    const future = await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&since=${Date.now() + 60_000}`);
    expect(future.body.items).toHaveLength(0);
    const bad = await get<{ error: { issues: Array<{ path: string }> } }>(`/api/v1/calls?limit=0&command=add`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues.map((i) => i.path).sort()).toEqual(['command', 'limit']);
  });

  it('pages through every call exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: Summary[]; nextCursor: string | null } } = await get(`/api/v1/calls?namespace=${ns}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((c) => c.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen.length).toBeGreaterThanOrEqual(13);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("tells a pod's story as a tree with totals per command", async () => {
    const story = await get<{ calls: Array<Summary & { children: Summary[] }>; sandboxes: Array<{ containerId: string; totals: Record<string, number> }> }>(`/api/v1/pods/${ns}/web-0`);
    expect(story.status).toBe(200);
    expect(story.body.calls.map((c) => c.command)).toEqual(['ADD', 'DEL']);
    expect(story.body.calls[0]!.children.map((c) => c.plugin)).toEqual(['host-local']);
    expect(story.body.sandboxes[0]!.containerId).toBe(`${ns}-web-0`);
    expect(story.body.sandboxes[0]!.totals.ADD).toBeGreaterThan(0);
    expect((await get(`/api/v1/pods/${ns}/nobody`)).status).toBe(404);
  });

  it("prints a pod's story at the command line, delegated calls indented under their parent", () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--api', daemon.url], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } });
    const res = cli('pod', `${ns}/web-0`);
    expect(res.status, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toContain(`pod ${ns}/web-0`);
    expect(lines.some((l) => l.startsWith(`sandbox ${`${ns}-web-0`.slice(0, 12)}`))).toBe(true);
    const add = lines.findIndex((l) => / {2}ADD +bridge /.test(l));
    expect(add).toBeGreaterThan(0);
    expect(lines[add + 1]).toMatch(/ {4}ADD +host-local /);
    expect(lines.some((l) => / {2}DEL +bridge /.test(l))).toBe(true);
    const missing = cli('pod', `${ns}/nobody`);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`cnirec: No calls are recorded for pod ${ns}/nobody.\n`);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });

  it('shows one call with its payloads, config and result', async () => {
    const [add] = (await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&pod=web-0&command=ADD&plugin=bridge`)).body.items;
    const detail = await get<{ stdin: { text: string; base64: string }; config: { name: string }; result: { ips: unknown[] }; children: Summary[]; env: Record<string, string> }>(`/api/v1/calls/${add!.id}`);
    expect(Buffer.from(detail.body.stdin.base64, 'base64').equals(configBytes(net.config))).toBe(true);
    expect(detail.body.config.name).toBe(net.config.name);
    expect(detail.body.result.ips).toHaveLength(1);
    expect(detail.body.children).toHaveLength(1);
    expect(detail.body.env.CNI_COMMAND).toBe('ADD');
    expect((await get('/api/v1/calls/no-such-call')).status).toBe(404);
  });

  it('tails a call made after connecting, with its exit code', async () => {
    const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail?namespace=${ns}-tail`);
    const messages: Array<{ type: string; call?: Summary }> = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString()) as { type: string; call?: Summary }));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const netns = await withNetns('cnirec-tail');
    try {
      const args = { plugin: `${CNI_BIN_DIR}/bridge`, containerId: `${ns}-tail`, netns: netns.path, ifname: 'eth0', cniArgs: podCniArgs(`${ns}-tail`, 'live-0', 'uid-live', `${ns}-tail`) };
      await execPlugin({ ...args, command: 'ADD', stdin: configBytes(net.config) });
      await execPlugin({ ...args, command: 'DEL', stdin: configBytes(net.config) });
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !messages.some((m) => m.type === 'call.finished' && m.call?.command === 'DEL' && m.call.plugin === 'bridge')) {
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      ws.close();
      await netns.remove();
    }
    const addStarted = messages.find((m) => m.type === 'call.started' && m.call?.command === 'ADD' && m.call.plugin === 'bridge');
    const addFinished = messages.find((m) => m.type === 'call.finished' && m.call?.command === 'ADD' && m.call.plugin === 'bridge');
    expect(addStarted).toBeDefined();
    expect(addFinished!.call!.exitCode).toBe(0);
    expect(addFinished!.call!.durationMs).toBeGreaterThan(0);
    expect(addFinished!.call!.pod).toMatchObject({ namespace: `${ns}-tail`, name: 'live-0' });
    expect(messages.filter((m) => m.call && m.call.pod?.namespace !== `${ns}-tail`)).toEqual([]);
  });

  it('replays a recorded call by hand in a fresh network namespace with the same result', async () => {
    const [add] = (await get<{ items: Summary[] }>(`/api/v1/calls?namespace=${ns}&pod=db-0&command=ADD&plugin=bridge`)).body.items;
    const recorded = await get<{ stdout: { base64: string }; netns: string }>(`/api/v1/calls/${add!.id}`);
    const script = await (await fetch(`${daemon.url}/api/v1/calls/${add!.id}/replay`)).text();
    expect(script).toMatch(/^#!/);
    // The recorded netns is gone: replay in a fresh one with the same name, as a person would.
    const netnsName = path.basename(recorded.body.netns);
    spawnSync('ip', ['netns', 'add', netnsName]);
    const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-replay-'));
    const file = path.join(dir, 'replay.sh');
    writeFileSync(file, script, { mode: 0o700 });
    try {
      const ran = spawnSync('sh', [file], { encoding: 'buffer', timeout: 30_000 });
      expect(ran.status, ran.stderr.toString()).toBe(0);
      const replayed = JSON.parse(ran.stdout.toString()) as { ips: Array<{ address: string }>; interfaces: Array<{ name: string; mac?: string }> };
      const original = JSON.parse(Buffer.from(recorded.body.stdout.base64, 'base64').toString()) as typeof replayed;
      // host-local hands out the next free address and the veth gets a new MAC: same shape, same subnet.
      const subnetOf = (a: string) => a.split('.').slice(0, 3).join('.');
      expect(replayed.ips.map((i) => subnetOf(i.address))).toEqual(original.ips.map((i) => subnetOf(i.address)));
      expect(replayed.interfaces.map((i) => i.name)[0]).toBe(original.interfaces[0]!.name);
      expect(readFileSync(file, 'utf8')).toContain('WARNING');
    } finally {
      const del = script.replace(/CNI_COMMAND=ADD/g, 'CNI_COMMAND=DEL');
      writeFileSync(file, del);
      spawnSync('sh', [file], { timeout: 30_000 });
      spawnSync('ip', ['netns', 'del', netnsName]);
    }
  });

  it('replays a deterministic plugin call to the same stdout, byte for byte', async () => {
    const netns = await withNetns('cnirec-rp');
    const plugin = path.resolve(import.meta.dirname, 'fixtures/plugins/tc-shaper.sh');
    const stdin = configBytes({ cniVersion: '1.0.0', name: 'shaped', type: 'tc-shaper', device: 'lo', note: "it's \"quoted\" $HOME `x`" });
    const containerId = `${ns}-shaped`;
    try {
      const original = await execPlugin({ plugin, command: 'ADD', containerId, netns: netns.path, ifname: 'eth0', cniPath: path.dirname(plugin), stdin });
      expect(original.exitCode).toBe(0);
      const [call] = await daemon.waitFor('the tc-shaper call', () => {
        const c = daemon.callsFor(containerId);
        return c.length > 0 ? c : null;
      });
      await execPlugin({ plugin, command: 'DEL', containerId, netns: netns.path, ifname: 'eth0', cniPath: path.dirname(plugin), stdin });
      const script = await (await fetch(`${daemon.url}/api/v1/calls/${call!.id}/replay`)).text();
      const ran = spawnSync('sh', ['-c', script], { encoding: 'buffer', timeout: 30_000 });
      expect(ran.status, ran.stderr.toString()).toBe(0);
      expect(ran.stdout.equals(original.stdout)).toBe(true);
      expect(ran.stdout.equals(call!.stdout.bytes)).toBe(true);
    } finally {
      await netns.remove();
    }
  });

  it('finds a DEL the runtime keeps retrying (bridge whose IPAM plugin is gone) and resolves it once a DEL succeeds', async () => {
    const containerId = `${ns}-stuck`;
    const base = { plugin: `${CNI_BIN_DIR}/bridge`, command: 'DEL', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, 'stuck-0', 'uid-stuck', containerId) };
    const failing = [];
    for (let i = 0; i < 3; i++) {
      const r = await execPlugin({ ...base, stdin: '{"cniVersion":"1.0.0","name":"x","type":"bridge","ipam":{"type":"gone"}}' });
      expect(r.exitCode).not.toBe(0);
      failing.push(r);
    }
    type Finding = { kind: string; containerId: string | null; callId: string | null; message: string; resolvedAt: string | null };
    const openLoop = async () => (await get<{ items: Finding[] }>('/api/v1/findings?kind=del-loop')).body.items.find((f) => f.containerId === containerId);
    let found: Finding | undefined;
    for (const deadline = Date.now() + 30_000; !found && Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) found = await openLoop();
    expect(found, 'no del-loop finding within 30 s').toBeDefined();
    expect(found!.message).toContain(`DEL of container ${containerId} (eth0) for pod ${ns}/stuck-0 failed 3 times`);
    // bridge's own error, as it printed it on stdout.
    const printed = JSON.parse(failing[2]!.stdout.toString()) as { msg: string };
    expect(found!.message).toContain(`bridge exited 1: ${printed.msg}`);
    const last = await get<{ pid: number }>(`/api/v1/calls/${found!.callId}`);
    expect(last.body.pid).toBe(failing[2]!.pid);

    // The pod's story says so under the sandbox, and so do both commands.
    const story = await get<{ sandboxes: Array<{ containerId: string; findings: Finding[] }> }>(`/api/v1/pods/${ns}/stuck-0`);
    expect(story.body.sandboxes.find((sb) => sb.containerId === containerId)?.findings.map((f) => f.kind)).toEqual(['del-loop']);
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--api', daemon.url], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } });
    const listed = cli('findings', '--kind', 'del-loop');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`cnirec show ${found!.callId}`);
    expect(cli('pod', `${ns}/stuck-0`).stdout).toContain(`finding del-loop (critical): DEL of container ${containerId}`);

    // The IPAM plugin is back: the next DEL succeeds and the loop is over.
    expect((await execPlugin({ ...base, stdin: configBytes(net.config) })).exitCode).toBe(0);
    for (const deadline = Date.now() + 30_000; (await openLoop()) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 250));
    expect(await openLoop(), 'the del-loop finding was not resolved within 30 s').toBeUndefined();
  });
});
