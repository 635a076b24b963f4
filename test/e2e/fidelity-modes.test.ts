/**
 * Capture mode switches under load, with the real tracer: while drivers run
 * bridge (delegating to host-local), a bash plugin whose helper execs in
 * place (echo.sh) and one with many helpers (tc-shaper.sh) at ~7 calls/s,
 * the test switches light ⇄ full six times. Then every driven call must be
 * stored exactly once, finished with the exit the caller saw, with its
 * delegate under it and its helpers as helpers (never as calls of their
 * own), no parent id naming no call; and every call recorded in full mode
 * has the bytes the caller sent and received, byte for byte.
 */

import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, type ExecPluginOptions, type ExecPluginResult } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');
const canRun = requirePrivilegedSuite();

interface Driven {
  readonly containerId: string;
  readonly plugin: string;
  readonly command: string;
  readonly stdin: Buffer;
  readonly result: ExecPluginResult;
  readonly startedAt: number;
  readonly endedAt: number;
}

interface Stretch {
  readonly mode: 'full' | 'light';
  readonly from: number;
  to: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(canRun)('capture mode switches under load', () => {
  let daemon: RunningDaemon;
  let net: TestBridgeNetwork;
  let ns: Netns;
  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'full' });
    net = await createTestBridgeNetwork('cnirec-switch');
    ns = await withNetns('cnirec-switch');
  });
  afterAll(async () => {
    await daemon?.stop();
    await ns?.remove();
    await net?.cleanup();
  });

  it('records every call exactly once with its tree, exit and (in full mode) its bytes, across six switches', { timeout: 240_000 }, async () => {
    const driven: Driven[] = [];
    let running = true;
    const call = async (opts: ExecPluginOptions): Promise<ExecPluginResult> => {
      const startedAt = Date.now();
      const result = await execPlugin(opts);
      const stdin = Buffer.isBuffer(opts.stdin) ? opts.stdin : Buffer.from(opts.stdin);
      driven.push({ containerId: opts.containerId, plugin: path.basename(opts.plugin), command: opts.command, stdin, result, startedAt, endedAt: Date.now() });
      return result;
    };
    /** Runs `one` every `periodMs` until the test stops the drivers. */
    const driver = async (periodMs: number, one: (i: number) => Promise<void>) => {
      for (let i = 0; running; i++) {
        const t0 = Date.now();
        await one(i);
        await sleep(Math.max(0, periodMs - (Date.now() - t0)));
      }
    };
    const tag = Date.now().toString(36);
    const drivers = [
      driver(600, async (i) => {
        const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId: `sw-br-${tag}-${i}`, netns: ns.path, ifname: `eth${i % 8}` };
        const add = await call({ ...base, command: 'ADD', stdin: configBytes(net.config) });
        if (add.exitCode === 0) await call({ ...base, command: 'DEL', stdin: configBytes(net.config) });
      }),
      driver(350, async (i) => {
        await call({
          plugin: path.join(FIXTURE_PLUGINS, 'echo.sh'),
          command: 'ADD',
          containerId: `sw-echo-${tag}-${i}`,
          netns: '/var/run/netns/none',
          ifname: 'eth0',
          cniPath: FIXTURE_PLUGINS,
          stdin: JSON.stringify({ cniVersion: '1.0.0', name: 'echo', type: 'echo', nonce: randomBytes(24).toString('hex') }),
        });
      }),
      driver(700, async (i) => {
        await call({
          plugin: path.join(FIXTURE_PLUGINS, 'tc-shaper.sh'),
          command: 'ADD',
          containerId: `sw-tc-${tag}-${i}`,
          netns: ns.path,
          ifname: 'eth0',
          cniPath: FIXTURE_PLUGINS,
          stdin: configBytes({ cniVersion: '1.0.0', name: 'shaped', type: 'tc-shaper', device: 'lo', nonce: i }),
        });
      }),
    ];

    // Six switches, each answered once the new tracer records; the mode stretches in between are known.
    const stretches: Stretch[] = [{ mode: 'full', from: Date.now(), to: Infinity }];
    await sleep(2_000);
    for (const mode of ['light', 'full', 'light', 'full', 'light', 'full'] as const) {
      stretches.at(-1)!.to = Date.now();
      const res = await fetch(`${daemon.url}/api/v1/tracer/mode`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode }) });
      expect(res.status, await res.clone().text()).toBe(200);
      stretches.push({ mode, from: Date.now(), to: Infinity });
      await sleep(1_500);
    }
    await sleep(1_500);
    running = false;
    await Promise.all(drivers);
    stretches.at(-1)!.to = Date.now();

    // Everything driven has been stored (finished, or not: what is there is compared below).
    const ids = new Set(driven.map((d) => d.containerId));
    await daemon.waitFor(
      'every driven call to be stored as ended',
      () => [...ids].every((id) => daemon.callsFor(id).length > 0) && [...ids].every((id) => daemon.store.listCalls({ containerId: id }, 50).items.every((c) => c.status !== 'running')),
      30_000,
    );

    const wrong: string[] = [];
    let bytesChecked = 0;
    let marked = 0;
    const stored = new Map<string, StoredCall[]>();
    for (const id of ids) stored.set(id, daemon.callsFor(id));
    const allIds = new Set([...stored.values()].flat().map((c) => c.id));
    for (const d of driven) {
      const calls = stored.get(d.containerId)!;
      const label = `${d.plugin} ${d.command} ${d.containerId}`;
      const tops = calls.filter((c) => c.parentId === null && c.plugin === d.plugin && c.command === d.command);
      if (tops.length !== 1) {
        wrong.push(`${label}: ${tops.length} top-level calls`);
        continue;
      }
      const top = tops[0]!;
      if (top.status !== 'finished' || top.exitCode !== d.result.exitCode) wrong.push(`${label}: ${top.status}, exit ${top.exitCode} (caller saw ${d.result.exitCode})`);
      const children = calls.filter((c) => c.parentId === top.id);
      const expectChildren = d.plugin === 'bridge' ? ['host-local'] : [];
      if (JSON.stringify(children.map((c) => c.plugin)) !== JSON.stringify(expectChildren)) wrong.push(`${label}: children ${JSON.stringify(children.map((c) => c.plugin))}`);
      if (d.plugin === 'tc-shaper.sh' && !['jq', 'tc'].every((h) => top.helpers.some((x) => path.basename(x.path) === h))) {
        wrong.push(`${label}: helpers ${JSON.stringify(top.helpers.map((h) => path.basename(h.path)))}`);
      }
      const inside = stretches.find((s) => d.startedAt >= s.from && d.endedAt <= s.to);
      if (inside && top.captureMode !== inside.mode) wrong.push(`${label}: recorded in ${top.captureMode} mode during a ${inside.mode} stretch`);
      if (top.captureMode === 'full' && top.lostRecords) marked++;
      if (top.captureMode === 'full' && !top.lostRecords) {
        bytesChecked++;
        if (!top.stdin.bytes.equals(d.stdin)) wrong.push(`${label}: stdin differs (${top.stdin.bytes.length} vs ${d.stdin.length} bytes)`);
        if (!top.stdout.bytes.equals(d.result.stdout)) wrong.push(`${label}: stdout differs (${top.stdout.bytes.length} vs ${d.result.stdout.length} bytes)`);
      }
    }
    // Nothing else under those container ids: no helper or delegate recorded as a call of its own, no orphan.
    const expected = driven.length + driven.filter((d) => d.plugin === 'bridge').length;
    const total = [...stored.values()].flat();
    for (const c of total) if (c.parentId !== null && !allIds.has(c.parentId)) wrong.push(`${c.plugin} ${c.command} ${c.containerId}: parent ${c.parentId} names no call`);
    const seconds = (stretches.at(-1)!.to - stretches[0]!.from) / 1000;
    console.info(`${driven.length} calls in ${seconds.toFixed(1)} s (${(driven.length / seconds).toFixed(1)}/s) over 6 switches; ${total.length} stored (${expected} expected); ${bytesChecked} full-mode payloads compared, ${marked} marked lostRecords; wrong: ${wrong.length}`);
    expect(wrong, wrong.join('\n')).toEqual([]);
    expect(total).toHaveLength(expected);
    expect(driven.length / seconds).toBeGreaterThan(4);
    expect(bytesChecked).toBeGreaterThan(10);
  });
});
