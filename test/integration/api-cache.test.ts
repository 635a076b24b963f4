import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../api/errors.js';
import { createReadOps } from '../../api/read-ops.js';
import { registerCache } from '../../api/routes/cache.js';
import { createFindingsReader, type FindingsReader } from '../../store/findings/findings-reader.js';
import { createCacheStore } from '../../store/cache/cache-store.js';
import { createCallLoopDetector } from '../../store/findings/call-loops.js';
import { createCallStore, openDatabase, type CallStore } from '../../store/index.js';
import { cacheEntry, finished, getJson, makeCall, T0_MS, type ErrorBody } from './api-harness.js';
import { tempStore } from './harness.js';


// The routes on their own, with the API's error handling: the daemon registers them in buildApp.
async function cacheApp(store: CallStore, cache: ReturnType<typeof createCacheStore> | null, findings?: FindingsReader): Promise<FastifyInstance> {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerCache(app, createReadOps({ store, cache, findings: findings ?? null }));
  await app.ready();
  return app;
}

describe('cache API', () => {
  let dir: string;
  let calls: CallStore;
  let app: FastifyInstance;
  let add: ReturnType<typeof makeCall>;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-api-cache-'));
    const db = openDatabase(path.join(dir, 'c.db'));
    calls = createCallStore(db);
    const cache = createCacheStore(db, { sinceMs: T0_MS - 1000, graceMs: 1000 });
    add = makeCall({ at: 0, containerId: 'aaa', podName: 'pod-aaa' });
    calls.writeEvents([finished(add)]);
    cache.writeCacheEvents([
      { type: 'cache.reconciled', atMs: T0_MS - 500, dirs: ['/var/lib/cni/results'], livePaths: [], watchingResults: true },
      { type: 'cache.added', entry: cacheEntry('aaa'), atMs: T0_MS + 60 },
      { type: 'cache.added', entry: cacheEntry('bbb', { networkName: 'other', ips: ['10.22.0.6'] }), atMs: T0_MS + 70 },
      { type: 'cache.removed', path: cacheEntry('bbb').path, dir: '/var/lib/cni/results', atMs: T0_MS + 80 },
      { type: 'cache.problem', problem: { kind: 'empty-file', path: '/var/lib/cni/results/x', dir: '/var/lib/cni/results', message: 'cache file is empty' }, atMs: T0_MS },
    ]);
    cache.refresh(T0_MS + 3500); // after the settle time: the whole chain is stored by then
    app = await cacheApp(calls, cache);
  });
  afterAll(async () => {
    await app.close();
    calls.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists live entries with their decoded config, pod and ADD call', async () => {
    const { status, body } = await getJson<{ items: Array<Record<string, unknown>> }>(app, '/api/v1/cache');
    expect(status).toBe(200);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      containerId: 'aaa',
      networkName: 'podnet',
      pod: { namespace: 'demo', name: 'pod-aaa' },
      config: { name: 'podnet' },
      addCallId: add.id,
      removedAt: null,
      firstSeen: new Date(T0_MS + 60).toISOString(),
    });
  });

  it('filters by container, network and pod, and shows removed entries on request', async () => {
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/cache?containerId=bbb')).body.items).toHaveLength(0);
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/cache?containerId=bbb&includeRemoved=true')).body.items).toHaveLength(1);
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/cache?network=other&includeRemoved=true')).body.items).toHaveLength(1);
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/cache?pod=demo/pod-aaa')).body.items).toHaveLength(1);
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/cache?pod=demo/nobody')).body.items).toHaveLength(0);
  });

  it('answers an IP history', async () => {
    const { status, body } = await getJson<{ ip: string; history: Array<Record<string, unknown>> }>(app, '/api/v1/ips/10.22.0.6');
    expect(status).toBe(200);
    expect(body.history).toEqual([
      expect.objectContaining({ containerId: 'bbb', source: 'cache', from: new Date(T0_MS + 70).toISOString(), to: new Date(T0_MS + 80).toISOString() }),
    ]);
    expect((await getJson<{ history: unknown[] }>(app, '/api/v1/ips/fd00::1')).body.history).toEqual([]);
  });

  it('lists findings', async () => {
    const { body } = await getJson<{ items: Array<Record<string, unknown>> }>(app, '/api/v1/findings');
    expect(body.items.map((f) => f.kind)).toEqual(['empty-file']);
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-ip')).body.items).toEqual([]);
  });

  it.each([
    ['/api/v1/cache?pod=demo', 'pod'],
    ['/api/v1/cache?includeRemoved=yes', 'includeRemoved'],
    ['/api/v1/cache?limit=0', 'limit'],
    ['/api/v1/ips/10.22.0.300', 'ip'],
    ['/api/v1/ips/10.22.0.5%2F16', 'ip'],
    ['/api/v1/findings?kind=bogus', 'kind'],
  ])('refuses %s naming %s', async (url, field) => {
    const { status, body } = await getJson<ErrorBody>(app, url);
    expect(status).toBe(400);
    expect(body.error.issues?.map((i) => i.path)).toContain(field);
  });

  it('says so when the daemon does not watch caches', async () => {
    const bare = await cacheApp(calls, null);
    const { status, body } = await getJson<ErrorBody>(bare, '/api/v1/findings');
    expect(status).toBe(501);
    expect(body.error.message).toMatch(/cache directories/);
    await bare.close();
  });

  it('serves the DEL/ADD loop findings, which need no cache, when no cache is watched', async () => {
    const t = tempStore('cnirec-api-loops-');
    const del = (at: number) => finished(makeCall({ at, command: 'DEL', exit: 1, containerId: 'stuck' }));
    t.store.writeEvents([del(0), del(10_000_000), del(20_000_000)]);
    createCallLoopDetector(t.db).detect(T0_MS + 60_000);
    const bare = await cacheApp(t.store, null, createFindingsReader(t.db));
    const { status, body } = await getJson<{ items: Array<Record<string, unknown>> }>(bare, '/api/v1/findings?kind=del-loop');
    expect(status).toBe(200);
    expect(body.items).toEqual([expect.objectContaining({ kind: 'del-loop', containerId: 'stuck', resolvedAt: null })]);
    expect((await getJson<ErrorBody>(bare, '/api/v1/cache')).status).toBe(501);
    await bare.close();
    t.remove();
  });
});
