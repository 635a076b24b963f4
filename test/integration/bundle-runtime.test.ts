/**
 * The runtime's side in bundles: what the record keeps of it (the condition changes of the window and each
 * condition's last before it; the sandboxes listed in the window, only the pods' when scoped); a bundle the
 * daemon made (its view and GC plan kept, the runtime named in versions.json and the doctor's section) served
 * by `cnirec open` with the same runtime view, sandboxes and plan as the live daemon's, marked recorded; a
 * bundle made with the daemon down asking a runtime itself (a fake CRI runtime on a real socket: its answer
 * redacted, its conditions folded over the record's) or failing to (said so); one that knows only the record.
 */

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../cli/mcp/server.js';
import { createRedactor, DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, compileKeyPatterns, leakTimingFor, type RuntimeSandbox, type RuntimeSnapshot } from '../../collector/index.js';
import { bundleRequest, bundleSetup, loadConfig, makeBundle, serveBundle } from '../../daemon/index.js';
import { createBundleWiring } from '../../daemon/bundle-wiring.js';
import type { BundleSetup } from '../../daemon/make-bundle.js';
import { createRuntimeTracker, type RuntimeTracker } from '../../store/runtime/index.js';
import { startFakeCri, type FakeCri } from '../support/fake-cri.js';
import { cacheEntry, makeCall, startApi, T0_MS, type ApiHarness } from './api-harness.js';
import { cnirec } from './cli-harness.js';
import { CONDITIONS_NOT_READY, runtimeSandbox, runtimeSnapshot } from './runtime-fixtures.js';

const redactor = createRedactor({ keys: compileKeyPatterns([...DEFAULT_REDACT_KEYS]), keysExcept: compileKeyPatterns([...DEFAULT_REDACT_KEYS_EXCEPT]), pointers: [] });
const quiet = pino({ level: 'silent' });
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const NOT_READY = CONDITIONS_NOT_READY;
/** A sandbox of pod demo/`name`, made a minute before T0. */
const sandbox = (id: string, name: string, over: Partial<RuntimeSandbox> = {}): RuntimeSandbox => runtimeSandbox(id, { name, uid: `uid-${name}`, createdAtMs: T0_MS - MIN, ...over });
/** The runtime answering since two hours before T0. */
const snap = (atMs: number, over: Partial<RuntimeSnapshot> = {}): RuntimeSnapshot => runtimeSnapshot(atMs, { answeringSinceMs: T0_MS - 120 * MIN, ...over });

let dir: string;
let live: ApiHarness;
let tracker: RuntimeTracker;
let node: { conf: string; bin: string; results: string; networks: string };
const errors: unknown[] = [];

// The runtime's story: ready two hours before T0 with pod old-0 (gone 90 minutes before T0), NetworkReady=false
// at T0 with web-0, ready again 30 s later with other-0 too; an attachment of pod gone-0 that no list has.
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-bundle-rt-'));
  node = { conf: path.join(dir, 'net.d'), bin: path.join(dir, 'bin'), results: path.join(dir, 'results'), networks: path.join(dir, 'networks') };
  for (const d of Object.values(node)) fs.mkdirSync(d, { recursive: true });
  live = await startApi({
    cache: true,
    runtime: (db) => {
      // The tracker answers all the API reads of the runtime.
      tracker = createRuntimeTracker(db, { timing: leakTimingFor(1000), onError: (e) => errors.push(e) });
      return tracker;
    },
    bundle: (db) => createBundleWiring(configFor(db.name, 'none'), redactor, () => ['{"msg":"a log line"}']),
  });
  live.write(makeCall({ at: 0, podName: 'web-0', containerId: 'sb-web' }), makeCall({ at: 30_000_000, podName: 'other-0', containerId: 'sb-other' }));
  live.cache!.writeCacheEvents([
    { type: 'cache.reconciled', atMs: T0_MS - 3 * MIN, dirs: [node.results], livePaths: [], watchingResults: true },
    { type: 'cache.added', entry: cacheEntry('sb-gone', { pod: { namespace: 'demo', name: 'gone-0', uid: null, infraContainerId: null }, ips: ['10.22.0.9'] }), atMs: T0_MS - 2 * MIN },
  ]);
  tracker.onRuntimeSnapshot(snap(T0_MS - 120 * MIN, { sandboxes: [sandbox('sb-old', 'old-0')] }));
  tracker.onRuntimeSnapshot(snap(T0_MS - 90 * MIN));
  tracker.onRuntimeSnapshot(snap(T0_MS, { conditions: NOT_READY, sandboxes: [sandbox('sb-web', 'web-0')] }));
  const both = [sandbox('sb-web', 'web-0'), sandbox('sb-other', 'other-0', { ip: '10.22.0.6' })];
  tracker.onRuntimeSnapshot(snap(T0_MS + 30_000, { sandboxes: both }));
  // A second list that misses gone-0's attachment: confirmed leaked.
  tracker.onRuntimeSnapshot(snap(T0_MS + 35_000, { sandboxes: both }));
  expect(tracker.view().leaks.confirmed).toBe(1);
});

afterAll(async () => {
  await live?.close();
  fs.rmSync(dir, { recursive: true, force: true });
  expect(errors).toEqual([]);
});

function configFor(db: string, criEndpoint: string) {
  return loadConfig({ db, cniConfDir: node.conf, cniBinDir: node.bin, cniCacheDirs: node.results, hostLocalDirs: node.networks, criEndpoint }, {});
}

let made = 0;
async function bundleHere(setup: BundleSetup, ask: Parameters<typeof bundleRequest>[0] = { sinceUs: (T0_MS - 60 * MIN) * 1000, untilUs: (T0_MS + 60 * MIN) * 1000 }) {
  const nowMs = Date.now();
  const m = await makeBundle(bundleRequest(ask, nowMs), { ...setup, tmpDir: dir }, null, nowMs);
  const file = path.join(dir, `here-${made++}.tar.gz`);
  fs.copyFileSync(m.file, file);
  await m.cleanup();
  return { file, manifest: m.manifest };
}

function unpack(file: string): { dir: string; json: (name: string) => unknown; db: BetterSqlite3.Database } {
  const out = fs.mkdtempSync(path.join(dir, 'x-'));
  execFileSync('tar', ['-xzf', file, '-C', out]);
  return { dir: out, json: (name) => JSON.parse(fs.readFileSync(path.join(out, name), 'utf8')), db: new BetterSqlite3(path.join(out, 'record.db'), { readonly: true }) };
}

async function opened(file: string) {
  const served = await serveBundle(file, { listen: { host: '127.0.0.1', port: 0 }, token: null, log: quiet, redactor, tmpDir: dir });
  const get = async <T = Record<string, unknown>>(url: string) => {
    const res = await fetch(`${served.url}${url}`);
    return { status: res.status, body: (await res.json()) as T };
  };
  return { served, get };
}

const liveJson = async (url: string) => (await live.app.inject({ method: 'GET', url })).json() as Record<string, unknown>;

describe("a bundle's record of the runtime", () => {
  it("keeps the condition changes of the window and each condition's last before it, and the sandboxes listed in the window (only the pods' when scoped)", async () => {
    const setup = bundleSetup(configFor(live.db.name, 'none'), redactor);
    const rows = (db: BetterSqlite3.Database, sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
    // A window that ends between NetworkReady=false and ready again, and before other-0 was first listed.
    const early = unpack((await bundleHere(setup, { sinceUs: (T0_MS - 60 * MIN) * 1000, untilUs: (T0_MS + 10_000) * 1000 })).file);
    expect(rows(early.db, 'SELECT type, status, at_ms FROM runtime_transitions ORDER BY at_ms, id')).toEqual([
      { type: 'Reachable', status: 1, at_ms: T0_MS - 120 * MIN },
      { type: 'RuntimeReady', status: 1, at_ms: T0_MS - 120 * MIN },
      { type: 'NetworkReady', status: 1, at_ms: T0_MS - 120 * MIN },
      { type: 'NetworkReady', status: 0, at_ms: T0_MS },
    ]);
    // old-0 went before the window; other-0 came after it.
    expect(rows(early.db, 'SELECT id FROM runtime_sandboxes ORDER BY id')).toEqual([{ id: 'sb-web' }]);
    early.db.close();

    const whole = unpack((await bundleHere(setup)).file);
    expect(rows(whole.db, 'SELECT type, status FROM runtime_transitions ORDER BY at_ms, id').map((r) => `${r.type}=${r.status}`)).toEqual([
      'Reachable=1',
      'RuntimeReady=1',
      'NetworkReady=1',
      'NetworkReady=0',
      'NetworkReady=1',
    ]);
    expect(rows(whole.db, 'SELECT id FROM runtime_sandboxes ORDER BY id')).toEqual([{ id: 'sb-other' }, { id: 'sb-web' }]);
    whole.db.close();

    // Scoped to a pod: its sandboxes only; the runtime's readiness is the node's, kept whole.
    const pod = unpack((await bundleHere(setup, { pods: ['demo/web-0'], sinceUs: (T0_MS - 60 * MIN) * 1000, untilUs: (T0_MS + 60 * MIN) * 1000 })).file);
    expect(rows(pod.db, 'SELECT id FROM runtime_sandboxes')).toEqual([{ id: 'sb-web' }]);
    expect(rows(pod.db, 'SELECT count(*) AS n FROM runtime_transitions')).toEqual([{ n: 5 }]);
    pod.db.close();
  });
});

describe('a bundle the daemon made', () => {
  let file: string;
  let files: ReturnType<typeof unpack>;
  let bundle: Awaited<ReturnType<typeof opened>>;
  beforeAll(async () => {
    const res = await live.app.inject({ method: 'GET', url: `/api/v1/bundle?since=${iso(T0_MS - 60 * MIN)}&until=${iso(T0_MS + 60 * MIN)}` });
    expect(res.statusCode, res.body).toBe(200);
    file = path.join(dir, 'daemon.tar.gz');
    fs.writeFileSync(file, res.rawPayload);
    files = unpack(file);
    bundle = await opened(file);
  });
  afterAll(async () => {
    files?.db.close();
    await bundle?.served.close();
  });

  it('keeps the runtime as the daemon saw it and the GC plan it judged, and names the runtime and its CRI version from it (crictl not asked)', async () => {
    expect(files.json('daemon/runtime.json')).toEqual(await liveJson('/api/v1/node/runtime'));
    expect(files.json('daemon/gc-plan.json')).toMatchObject({ judging: true, items: [{ containerId: 'sb-gone', addresses: ['10.22.0.9'] }] });
    expect(files.json('node/versions.json')).toMatchObject({ cri: { from: 'daemon', endpoint: '/run/containerd/containerd.sock', name: 'containerd', version: '1.6.20', apiVersion: 'v1' } });
    expect(files.json('node/doctor.json')).toMatchObject({ runtime: { source: 'daemon', reachable: true, name: 'containerd', leaks: { confirmed: 1 } } });
    expect(fs.existsSync(path.join(files.dir, 'node/runtime.json'))).toBe(false);
  });

  it('opened, answers the runtime view, the sandboxes of a pod story and the GC plan as the live daemon did, marked recorded then', async () => {
    const view = await bundle.get<Record<string, unknown> & { recorded: Record<string, unknown> }>('/api/v1/node/runtime');
    expect(view.status).toBe(200);
    expect(view.body.recorded).toMatchObject({ node: bundle.served.manifest.node, takenAt: bundle.served.manifest.takenAt, from: 'daemon' });
    expect(view.body.recorded.note).toMatch(/^As the daemon on node .* saw the container runtime when the bundle was taken \(.*\): recorded, not live\.$/);
    expect({ ...view.body, recorded: null }).toEqual(await liveJson('/api/v1/node/runtime'));
    for (const pod of ['web-0', 'other-0']) {
      const story = await bundle.get<{ sandboxes: { runtime: unknown }[] }>(`/api/v1/pods/demo/${pod}`);
      expect(story.body.sandboxes.map((s) => s.runtime)).toEqual(((await liveJson(`/api/v1/pods/demo/${pod}`)) as { sandboxes: { runtime: unknown }[] }).sandboxes.map((s) => s.runtime));
      expect(story.body.sandboxes[0]!.runtime).toMatchObject({ state: 'ready', goneAt: null });
    }
    const plan = await bundle.get<Record<string, unknown> & { recorded: { note: string } }>('/api/v1/node/cni/gc-plan');
    expect(plan.status).toBe(200);
    expect({ ...plan.body, recorded: null }).toEqual(await liveJson('/api/v1/node/cni/gc-plan'));
    expect(plan.body.recorded.note).toContain('`cnirec gc` on the node lists what a GC would free now');
  });

  it('opened, has cnirec mcp node_cni tell the runtime as recorded when the bundle was taken', async () => {
    const server = createMcpServer({ api: bundle.served.url, token: null, timeoutMs: 5000 }, { allowCaptureChanges: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const mcp = new Client({ name: 'test', version: '0' });
    await mcp.connect(b);
    const r = (await mcp.callTool({ name: 'node_cni', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect((r.content[0] as { text: string }).text).toContain('the container runtime answered when the bundle was taken, 1 leaked attachment confirmed');
    expect(r.structuredContent).toMatchObject({ runtime: { reachable: true, recorded: { from: 'daemon' } }, source: { kind: 'bundle' } });
    await mcp.close();
  });
});

describe('a bundle made with the daemon down', () => {
  let fake: FakeCri;
  beforeAll(async () => {
    fake = await startFakeCri('cri', {
      name: 'containerd',
      version: '1.7.13',
      conditions: [
        { type: 'RuntimeReady', status: true },
        { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
      ],
      sandboxes: [{ id: 'sb-web', namespace: 'demo', name: 'web-0', annotations: { 'vendor.example/api-secret': 'hunter2-annotation' } }],
    });
  });
  afterAll(async () => fake?.close());

  it('asks the runtime itself, keeps its answer redacted, names it in versions.json and the doctor, and says so in the manifest', async () => {
    const { file, manifest } = await bundleHere(bundleSetup(configFor(live.db.name, fake.socket), redactor));
    expect(fs.readFileSync(file).includes('hunter2-annotation')).toBe(false);
    const files = unpack(file);
    files.db.close();
    expect(files.json('node/runtime.json')).toMatchObject({
      endpoint: fake.socket,
      reachable: true,
      name: 'containerd',
      version: '1.7.13',
      conditions: [{ type: 'RuntimeReady', status: true }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady' }],
      sandboxes: [{ id: 'sb-web', namespace: 'demo', name: 'web-0', state: 'ready', annotations: { 'vendor.example/api-secret': '[redacted]' } }],
      error: null,
    });
    expect(fs.readFileSync(path.join(files.dir, 'node/runtime.json'), 'utf8')).not.toContain('hunter2');
    expect(files.json('node/versions.json')).toMatchObject({ cri: { from: 'runtime', endpoint: fake.socket, name: 'containerd', version: '1.7.13' } });
    expect(files.json('node/doctor.json')).toMatchObject({ runtime: { source: 'runtime', reachable: true, conditions: [{ type: 'RuntimeReady' }, { type: 'NetworkReady', status: false, since: null }] } });
    expect(manifest.notes).toContainEqual(`No daemon answered: the container runtime (containerd 1.7.13 at ${fake.socket}) was asked directly, 1 sandbox listed (node/runtime.json).`);

    const { served, get } = await opened(file);
    try {
      const view = await get<{ reachable: boolean; name: string; lastCheckedAt: string; conditions: { type: string; status: boolean; since: string }[]; transitions: { type: string; status: boolean; at: string }[]; recorded: { from: string; note: string }; leaks: { judging: boolean } }>(
        '/api/v1/node/runtime',
      );
      // The record ended ready; the runtime asked when the bundle was taken says not ready, since then.
      expect(view.body).toMatchObject({ reachable: true, name: 'containerd', recorded: { from: 'runtime' }, leaks: { judging: false } });
      expect(view.body.recorded.note).toContain('the daemon was down');
      expect(view.body.conditions).toEqual([
        expect.objectContaining({ type: 'RuntimeReady', status: true, since: iso(T0_MS - 120 * MIN) }),
        expect.objectContaining({ type: 'NetworkReady', status: false, since: view.body.lastCheckedAt }),
      ]);
      expect(view.body.transitions[0]).toMatchObject({ type: 'NetworkReady', status: false, at: view.body.lastCheckedAt });
      // Listed when the bundle was taken: seen then.
      const story = await get<{ sandboxes: { runtime: { seenAt: string; goneAt: string | null } | null }[] }>('/api/v1/pods/demo/web-0');
      expect(story.body.sandboxes[0]!.runtime).toMatchObject({ seenAt: view.body.lastCheckedAt, goneAt: null });
      const plan = await get<{ error: { message: string } }>('/api/v1/node/cni/gc-plan');
      expect(plan.status).toBe(501);
      expect(plan.body.error.message).toMatch(/^This is a bundle of node .* taken at .*, not a live node, and its daemon did not answer then, so no GC plan was recorded: `cnirec gc` on the node lists what a GC would free\.$/);
    } finally {
      await served.close();
    }
  });

  it('says when the runtime could not be asked, and serves what the record last had beside why', async () => {
    const absent = path.join(dir, 'no-runtime.sock');
    const { file, manifest } = await bundleHere(bundleSetup(configFor(live.db.name, absent), redactor));
    expect(manifest.notes).toContainEqual(expect.stringMatching(/^The container runtime could not be asked: No CRI socket at .*no-runtime\.sock/));
    const files = unpack(file);
    files.db.close();
    expect(files.json('node/runtime.json')).toMatchObject({ reachable: false, errorKind: 'absent', name: null });
    const { served, get } = await opened(file);
    try {
      const view = await get<Record<string, unknown> & { conditions: unknown[] }>('/api/v1/node/runtime');
      expect(view.body).toMatchObject({ reachable: false, errorKind: 'absent', endpoint: absent, recorded: { from: 'runtime' } });
      expect(view.body.conditions).toHaveLength(2);
    } finally {
      await served.close();
    }
  });

  it('with only its record to go by, serves the runtime as the record last had it', async () => {
    const setup = { ...bundleSetup(configFor(live.db.name, 'none'), redactor) };
    const { askRuntime: _asked, ...recordOnly } = setup;
    const { file } = await bundleHere(recordOnly);
    const { served, get } = await opened(file);
    try {
      const view = await get<Record<string, unknown> & { recorded: { note: string } }>('/api/v1/node/runtime');
      expect(view.body).toMatchObject({
        endpoint: '/run/containerd/containerd.sock',
        reachable: true,
        name: null,
        lastCheckedAt: null,
        answeringSince: iso(T0_MS - 120 * MIN),
        conditions: [{ type: 'RuntimeReady', status: true }, { type: 'NetworkReady', status: true, since: iso(T0_MS + 30_000) }],
        leaks: { judging: false, confirmed: 1 },
        recorded: { from: 'record' },
      });
      expect(view.body.recorded.note).toContain('nothing asked the container runtime');
    } finally {
      await served.close();
    }
  });
});

describe('cnirec bundle with no daemon answering', () => {
  let fake: FakeCri;
  beforeAll(async () => {
    fake = await startFakeCri('cri', { name: 'containerd', version: '1.7.13' });
  });
  afterAll(async () => fake?.close());

  it('asks the runtime named by --cri-endpoint, read-only', async () => {
    const out = path.join(dir, 'cli.tar.gz');
    // --db: made here from the database, whether a daemon answers or not.
    const r = await cnirec(['bundle', '--db', live.db.name, '--cri-endpoint', `unix://${fake.socket}`, '--no-payloads', '-o', out], {
      env: { CNIREC_CNI_CONF_DIR: node.conf, CNIREC_CNI_BIN_DIR: node.bin, CNIREC_CNI_CACHE_DIRS: node.results, CNIREC_HOST_LOCAL_DIRS: node.networks },
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const files = unpack(out);
    files.db.close();
    expect(files.json('node/runtime.json')).toMatchObject({ endpoint: fake.socket, reachable: true, name: 'containerd', version: '1.7.13' });
    expect(fake.state.calls).toMatchObject({ Version: 1, Status: 1, ListPodSandbox: 1 });
    expect(Object.keys(fake.state.calls).sort()).toEqual(['ListPodSandbox', 'Status', 'Version']);
  });
});
