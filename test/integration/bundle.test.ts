/**
 * `cnirec bundle` and `cnirec open` without a daemon: a bundle made from a
 * database file (window, pod and call filters, payloads left out, a size
 * bound), its node files redacted, and the bundle served read-only: the same
 * answers as the record it was cut from, a bundle of it cut again.
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../cli/mcp/server.js';
import { createRedactor, DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, compileKeyPatterns } from '../../collector/index.js';
import { bundleRequest, makeBundle, readBundle, serveBundle, type BundleManifest } from '../../daemon/index.js';
import type { BundleSetup } from '../../daemon/make-bundle.js';
import { createCacheStore, restoreIndexes } from '../../store/index.js';
import { cacheEntry, delegatedIpam, finished, makeCall, makeHelper, startApi, T0, T0_MS, type ApiHarness } from './api-harness.js';

const redactor = createRedactor({ keys: compileKeyPatterns([...DEFAULT_REDACT_KEYS]), keysExcept: compileKeyPatterns([...DEFAULT_REDACT_KEYS_EXCEPT]), pointers: [] });
const quiet = pino({ level: 'silent' });
const HOUR_US = 3_600_000_000;

let dir: string;
let live: ApiHarness;
let setup: BundleSetup;
const made: string[] = [];

// The record: pod web-0's ADD (bridge → host-local, a helper) and DEL, pod web-1's failed ADD, and an ADD
// of web-0 two hours before the others.
const add0 = makeCall({ at: 0, podName: 'web-0', helpers: [makeHelper()] });
const ipam0 = delegatedIpam(add0);
const del0 = makeCall({ at: 60_000_000, podName: 'web-0', command: 'DEL' });
const add1 = makeCall({ at: 10_000_000, podName: 'web-1', exit: 1 });
const old0 = makeCall({ at: -2 * HOUR_US, podName: 'web-0' });

const SECRETS = ['hunter2-conf', 'hunter2-cachecfg', 'hunter2-args', 'hunter2-result'];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-bundle-it-'));
  live = await startApi({ cache: true });
  live.store.writeEvents([add0, ipam0, del0, add1, old0].map(finished));
  const cache = createCacheStore(live.db, { sinceMs: T0_MS - 1000, graceMs: 1000 });
  cache.writeCacheEvents([
    { type: 'cache.reconciled', atMs: T0_MS - 500, dirs: ['/var/lib/cni/results'], livePaths: [], watchingResults: true },
    { type: 'cache.added', entry: cacheEntry('sandbox-web-0', { pod: { namespace: 'demo', name: 'web-0', uid: null, infraContainerId: null } }), atMs: T0_MS + 60 },
    { type: 'cache.added', entry: cacheEntry('sandbox-web-1', { pod: { namespace: 'demo', name: 'web-1', uid: null, infraContainerId: null }, ips: ['10.22.0.6'] }), atMs: T0_MS + 70 },
  ]);
  cache.refresh(T0_MS + 3500);

  // The node's files: a conf, a libcni cache file and a host-local reservation, each with secrets where plugins put them.
  const conf = path.join(dir, 'net.d');
  const results = path.join(dir, 'results');
  const networks = path.join(dir, 'networks', 'podnet');
  for (const d of [conf, results, networks, path.join(dir, 'bin')]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(conf, '10-podnet.conflist'), JSON.stringify({ cniVersion: '1.0.0', name: 'podnet', plugins: [{ type: 'bridge', password: 'hunter2-conf' }] }));
  const cached = {
    kind: 'cniCacheV1',
    containerId: 'sandbox-web-0',
    config: Buffer.from(JSON.stringify({ name: 'podnet', plugins: [{ type: 'bridge', token: 'hunter2-cachecfg' }] })).toString('base64'),
    ifName: 'eth0',
    networkName: 'podnet',
    cniArgs: [['K8S_POD_NAME', 'web-0'], ['VENDOR_API_KEY', 'hunter2-args']],
    result: { ips: [{ address: '10.22.0.5/16' }], secret: 'hunter2-result' },
  };
  fs.writeFileSync(path.join(results, 'podnet-sandbox-web-0-eth0'), JSON.stringify(cached));
  fs.writeFileSync(path.join(networks, '10.22.0.5'), 'sandbox-web-0\r\neth0');
  fs.writeFileSync(path.join(dir, 'bin', 'bridge'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  setup = {
    db: live.db.name,
    node: 'node-7',
    requested: { confDirs: [conf], binDirs: [path.join(dir, 'bin')] },
    cacheDirs: [results],
    hostLocalDirs: [path.join(dir, 'networks')],
    redactor,
    bpftrace: 'bpftrace',
    env: {},
    tmpDir: dir,
  };
});

afterAll(async () => {
  await live?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const window = (fromUs: number, toUs: number) => ({ sinceUs: fromUs, untilUs: toUs });

async function bundle(ask: Parameters<typeof bundleRequest>[0]): Promise<{ file: string; manifest: BundleManifest }> {
  const m = await makeBundle(bundleRequest(ask, T0_MS + 3_600_000), setup, null, T0_MS + 3_600_000);
  const file = path.join(dir, `b-${made.length}.tar.gz`);
  fs.copyFileSync(m.file, file);
  await m.cleanup();
  made.push(file);
  return { file, manifest: m.manifest };
}

function recordOf(manifestFile: string): { db: BetterSqlite3.Database; close(): void } {
  const out = fs.mkdtempSync(path.join(dir, 'x-'));
  execFileSync('tar', ['-xzf', manifestFile, '-C', out]);
  const db = new BetterSqlite3(path.join(out, 'record.db'), { readonly: true });
  return { db, close: () => db.close() };
}

const ids = (db: BetterSqlite3.Database) => (db.prepare('SELECT id FROM calls ORDER BY id').all() as { id: string }[]).map((r) => r.id);

describe('a bundle made from the database alone', () => {
  it('keeps the window\'s calls with what they delegated, every table of the schema, and lists each file with its sha256', async () => {
    const { file, manifest } = await bundle(window(T0 - HOUR_US, T0 + HOUR_US));
    const r = recordOf(file);
    try {
      expect(ids(r.db)).toEqual([add0.id, ipam0.id, add1.id, del0.id].sort());
      expect(r.db.pragma('integrity_check', { simple: true })).toBe('ok');
      const live = new BetterSqlite3(setup.db, { readonly: true });
      const names = (db: BetterSqlite3.Database, type: string) => (db.prepare("SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name").all(type) as { name: string }[]).map((t) => t.name);
      expect(names(r.db, 'table')).toEqual(names(live, 'table'));
      // Indexes are left out (rebuilt from the rows when it is opened): half the compressed size otherwise.
      expect(names(r.db, 'index')).toEqual([]);
      expect(names(live, 'index').length).toBeGreaterThan(20);
      const copy = path.join(dir, 'restored.db');
      fs.copyFileSync(r.db.name, copy);
      expect(restoreIndexes(copy)).toBe(names(live, 'index').length);
      const restored = new BetterSqlite3(copy, { readonly: true });
      expect(names(restored, 'index')).toEqual(names(live, 'index'));
      restored.close();
      expect(r.db.pragma('user_version', { simple: true })).toBe(live.pragma('user_version', { simple: true }));
      live.close();
      expect((r.db.prepare('SELECT count(*) AS n FROM helpers').get() as { n: number }).n).toBe(1);
    } finally {
      r.close();
    }
    expect(manifest).toMatchObject({ node: 'node-7', filters: { pods: [], calls: [] }, payloads: { kept: 'all' }, daemon: { answered: false }, rows: { calls: 4 } });
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    expect(listed[0]).toBe('manifest.json');
    expect(listed).toEqual(expect.arrayContaining(['README.txt', 'record.db', 'node/doctor.json', 'node/plugins.json', 'node/files.json', 'node/versions.json']));
    expect(manifest.files.map((f) => f.path).sort()).toEqual(listed.filter((n) => n !== 'manifest.json').sort());
  });

  it('narrows to a pod (its calls in the window, its cache history) and to a call (its whole tree, whatever the window)', async () => {
    const pod = await bundle({ ...window(T0 - HOUR_US, T0 + HOUR_US), pods: ['demo/web-0'] });
    let r = recordOf(pod.file);
    expect(ids(r.db)).toEqual([add0.id, ipam0.id, del0.id].sort());
    expect((r.db.prepare('SELECT DISTINCT container_id AS c FROM cache_entries').all() as { c: string }[]).map((x) => x.c)).toEqual(['sandbox-web-0']);
    r.close();

    const call = await bundle({ ...window(T0 + 2 * HOUR_US, T0 + 3 * HOUR_US), calls: [ipam0.id] });
    r = recordOf(call.file);
    expect(ids(r.db)).toEqual([add0.id, ipam0.id].sort());
    expect(call.manifest.filters.calls).toEqual([ipam0.id]);
    // The window widens to the calls kept.
    expect(Date.parse(call.manifest.window.since)).toBeLessThanOrEqual(add0.startedAtUs / 1000);
    r.close();

    await expect(bundle({ calls: ['no-such-call'] })).rejects.toMatchObject({ name: 'BundleError', kind: 'not-found' });
  });

  it('leaves payloads out when asked, keeping their sizes and saying they were cut', async () => {
    const { file, manifest } = await bundle({ ...window(T0 - HOUR_US, T0 + HOUR_US), payloads: false });
    const r = recordOf(file);
    const row = r.db.prepare('SELECT length(stdin) AS n, stdin_total AS total, stdin_truncated AS cut FROM calls WHERE id = ?').get(add0.id) as { n: number; total: number; cut: number };
    r.close();
    expect(row.n).toBe(0);
    expect(row.total).toBe(add0.stdin.totalBytes);
    expect(row.cut).toBe(add0.stdin.bytes.length > 0 ? 1 : 0);
    expect(manifest.payloads).toMatchObject({ kept: 'none', why: '--no-payloads' });
  });

  it('keeps secrets out of the node files it takes: conf, libcni cache (config, args, result)', async () => {
    const { file } = await bundle(window(T0 - HOUR_US, T0 + HOUR_US));
    const bytes = gunzipSync(fs.readFileSync(file)).toString('latin1');
    for (const secret of SECRETS) expect(bytes, secret).not.toContain(secret);
    expect(bytes).toContain('[redacted]');
    expect(bytes).toContain('sandbox-web-0\r\neth0');
  });
});

describe('a bundle bounded by maxBytes', () => {
  it('leaves payloads out oldest first until it fits, and says from when', async () => {
    // 120 calls with 24 KiB of random (incompressible) stdin each: ~2.8 MiB of payloads.
    const big = await startApi();
    const calls = Array.from({ length: 120 }, (_, i) => makeCall({ at: i * 1_000_000, podName: `big-${i}`, stdin: { bytes: randomBytes(24 * 1024), totalBytes: 24 * 1024, truncated: false } }));
    big.store.writeEvents(calls.map(finished));
    try {
      const ask = { ...window(T0 - HOUR_US, T0 + HOUR_US), maxBytes: 1024 * 1024 };
      const m = await makeBundle(bundleRequest(ask, T0_MS), { ...setup, db: big.db.name }, null, T0_MS);
      expect(fs.statSync(m.file).size).toBeLessThanOrEqual(1024 * 1024);
      expect(m.manifest.payloads.kept).toBe('partial');
      const cut = Date.parse(m.manifest.payloads.leftOutBefore!) * 1000;
      const r = recordOf(m.file);
      const rows = r.db.prepare('SELECT started_at_us AS at, length(stdin) AS n FROM calls ORDER BY started_at_us').all() as { at: number; n: number }[];
      r.close();
      await m.cleanup();
      expect(rows.filter((x) => x.at < cut).every((x) => x.n === 0)).toBe(true);
      expect(rows.filter((x) => x.at >= cut).every((x) => x.n === 24 * 1024)).toBe(true);
      expect(rows.at(-1)!.n).toBe(24 * 1024);
      expect(m.manifest.payloads.leftOut).toBe(rows.filter((x) => x.at < cut).length);

      await expect(makeBundle(bundleRequest({ ...ask, maxBytes: 10 * 1024, payloads: false }, T0_MS), { ...setup, db: big.db.name }, null, T0_MS)).rejects.toMatchObject({ kind: 'too-big' });
    } finally {
      await big.close();
    }
  });
});

describe('a bundle opened', () => {
  let served: Awaited<ReturnType<typeof serveBundle>>;
  let file: string;
  beforeAll(async () => {
    file = (await bundle(window(T0 - 3 * HOUR_US, T0 + HOUR_US))).file;
    served = await serveBundle(file, { listen: { host: '127.0.0.1', port: 0 }, token: null, log: quiet, redactor, tmpDir: dir });
  });
  afterAll(async () => served?.close());

  const get = async (url: string) => {
    const res = await fetch(`${served.url}${url}`);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it("answers a pod's story and a call's detail as the record it was cut from does", async () => {
    for (const url of ['/api/v1/pods/demo/web-0', `/api/v1/calls/${add0.id}`, `/api/v1/calls/${ipam0.id}`, '/api/v1/findings?includeResolved=true', '/api/v1/cache?includeRemoved=true', '/api/v1/calls?limit=100']) {
      const fromBundle = await get(url);
      const fromLive = live.app.inject({ method: 'GET', url });
      expect(fromBundle.status, url).toBe(200);
      expect(fromBundle.body, url).toEqual((await fromLive).json());
    }
  });

  it('says it is a bundle, of which node and when, on every answer and at /api/v1/source', async () => {
    const { body, headers } = await get('/api/v1/source');
    expect(body).toMatchObject({ kind: 'bundle', node: 'node-7', bundle: { takenAt: new Date(T0_MS + 3_600_000).toISOString(), daemonAnswered: false } });
    expect(headers.get('cnirec-bundle')).toBe(`node=node-7; taken-at=${new Date(T0_MS + 3_600_000).toISOString()}`);
    const doctor = await get('/api/v1/node/cni');
    expect(JSON.stringify(doctor.body)).toContain('10-podnet.conflist');
  });

  it('answers cnirec mcp as a bundle: each tool says it is no live node, and of which node', async () => {
    const server = createMcpServer({ api: served.url, token: null, timeoutMs: 5000 }, { allowCaptureChanges: false });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const mcp = new Client({ name: 'test', version: '0' });
    await mcp.connect(b);
    const r = (await mcp.callTool({ name: 'pod_story', arguments: { pod: 'demo/web-0' } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect((r.content[0] as { text: string }).text).toMatch(/^From a bundle opened with cnirec open, not a live node/);
    expect(r.structuredContent).toMatchObject({ source: { kind: 'bundle', node: 'node-7' } });
    await mcp.close();
  });

  it('switches nothing: the capture mode stays as recorded', async () => {
    const res = await fetch(`${served.url}/api/v1/tracer/mode`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'full' }) });
    expect(res.status).toBe(501);
  });

  it('gives the bundle back whole, or cut for a pod with the node files carried over', async () => {
    const whole = await fetch(`${served.url}/api/v1/bundle`);
    expect(Buffer.from(await whole.arrayBuffer()).equals(fs.readFileSync(file))).toBe(true);
    const cut = await fetch(`${served.url}/api/v1/bundle?pod=demo/web-1`);
    expect(cut.status).toBe(200);
    const cutFile = path.join(dir, 'cut.tar.gz');
    fs.writeFileSync(cutFile, Buffer.from(await cut.arrayBuffer()));
    const opened = await readBundle(cutFile, dir);
    expect(opened.manifest).toMatchObject({ node: 'node-7', filters: { pods: [{ namespace: 'demo', name: 'web-1' }] }, rows: { calls: 1 } });
    expect(opened.manifest.files.map((f) => f.path)).toContain('node/doctor.json');
    await opened.cleanup();
  });
});

describe('files that are not good bundles', () => {
  const refuse = async (file: string) => {
    const err = await readBundle(file, dir).then(
      async (b) => (await b.cleanup(), null),
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('BundleError');
    expect(err!.message.split(/\.\s/).length, err!.message).toBe(1);
    return err!.message;
  };

  it('refuses a missing file, plain text, a cut file, a damaged one and a foreign tar, each in one sentence', async () => {
    const good = made[0]!;
    expect(await refuse(path.join(dir, 'nope.tar.gz'))).toMatch(/There is no file/);
    const text = path.join(dir, 'text.tar.gz');
    fs.writeFileSync(text, 'hello');
    expect(await refuse(text)).toMatch(/is not a cnirec bundle \(it is not a gzip file\)/);
    const cut = path.join(dir, 'cut-short.tar.gz');
    fs.writeFileSync(cut, fs.readFileSync(good).subarray(0, Math.floor(fs.statSync(good).size * 0.6)));
    expect(await refuse(cut)).toMatch(/cut short/);
    const damaged = Buffer.from(fs.readFileSync(good));
    for (let i = 2000; i < 2100; i++) damaged[i] = damaged[i]! ^ 0xff;
    const bad = path.join(dir, 'damaged.tar.gz');
    fs.writeFileSync(bad, damaged);
    expect(await refuse(bad)).toMatch(/damaged|cut short|not a cnirec bundle/);
    const foreign = path.join(dir, 'foreign.tar.gz');
    execFileSync('tar', ['-czf', foreign, '-C', path.dirname(setup.db), 'calls.db']);
    expect(await refuse(foreign)).toMatch(/not a cnirec bundle \(it does not start with a cnirec manifest.json\)/);
  });

  it('refuses a file changed after it was made', async () => {
    const out = fs.mkdtempSync(path.join(dir, 'edit-'));
    execFileSync('tar', ['-xzf', made[0]!, '-C', out]);
    fs.appendFileSync(path.join(out, 'README.txt'), 'edited\n');
    const edited = path.join(dir, 'edited.tar.gz');
    execFileSync('tar', ['-czf', edited, '-C', out, 'manifest.json', 'README.txt', 'record.db']);
    expect(await refuse(edited)).toMatch(/README.txt is not the file its manifest lists/);
  });
});

describe('bundles of other schema versions', () => {
  /** A bundle of `made[0]` with its record (and manifest) set to `version`. */
  async function withSchema(version: number): Promise<string> {
    const out = fs.mkdtempSync(path.join(dir, 'v-'));
    execFileSync('tar', ['-xzf', made[0]!, '-C', out]);
    const record = path.join(out, 'record.db');
    const db = new BetterSqlite3(record);
    // Schema 14's record: 15 added indexes only (bundles leave them out), 16 the runtime's two tables.
    if (version < 16) db.exec('DROP TABLE runtime_transitions; DROP TABLE runtime_sandboxes');
    db.pragma(`user_version = ${version}`);
    db.close();
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8')) as BundleManifest;
    const sha = execFileSync('sha256sum', [record], { encoding: 'utf8' }).split(' ')[0]!;
    manifest.schemaVersion = version;
    manifest.files = manifest.files.map((f) => (f.path === 'record.db' ? { ...f, sha256: sha, bytes: fs.statSync(record).size } : f));
    fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest));
    const file = path.join(dir, `schema-${version}.tar.gz`);
    execFileSync('tar', ['-czf', file, '-C', out, 'manifest.json', ...manifest.files.map((f) => f.path)]);
    return file;
  }

  it('opens an older one, upgrading a private copy', async () => {
    const file = await withSchema(14);
    const served = await serveBundle(file, { listen: { host: '127.0.0.1', port: 0 }, token: null, log: quiet, redactor, tmpDir: dir });
    expect(served.upgradedFrom).toBe(14);
    expect((await fetch(`${served.url}/api/v1/pods/demo/web-0`)).status).toBe(200);
    await served.close();
  });

  it('says which cnirec a newer one needs', async () => {
    const file = await withSchema(999);
    const err = await serveBundle(file, { listen: { host: '127.0.0.1', port: 0 }, token: null, log: quiet, redactor, tmpDir: dir }).catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ name: 'BundleError' });
    expect((err as Error).message).toMatch(/holds a record of schema 999, made by cnirec .*; this cnirec reads schemas up to \d+: open it with cnirec .* or newer\./);
  });
});
