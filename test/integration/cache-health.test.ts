// /healthz and /metrics show the CNI cache watcher as the daemon wires it:
// real directories, a real watcher, the cache store on a real database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../api/deps.js';
import { registerHealth } from '../../api/routes/health.js';
import { registerMetrics } from '../../api/routes/metrics.js';
import { createCacheWiring, type CacheWiring } from '../../daemon/cache-wiring.js';
import type { CacheEvent } from '../../collector/cache/cache-types.js';
import { createCallStore, openDatabase, type Database } from '../../store/index.js';
import { TRACER_STATUS } from './api-harness.js';
import { COLLECTOR_STATS, STORE_STATUS } from './harness.js';

const FIXTURE = path.join(import.meta.dirname, '../fixtures/cache/results', `podman-test-net-${'1'.repeat(64)}-eth0`);

describe('the cache watcher on /healthz and /metrics', () => {
  let dir: string;
  let db: Database;
  let wiring: CacheWiring;
  let app: FastifyInstance;
  const results = () => path.join(dir, 'results');
  const ipam = () => path.join(dir, 'networks');
  const until = async (what: string, pred: () => boolean | Promise<boolean>) => {
    const end = Date.now() + 5000;
    while (!(await pred())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const health = async () => (await app.inject({ method: 'GET', url: '/healthz' })).json<{ status: string; cache: Record<string, unknown> | null }>();
  const metric = async (series: string) => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  async function startApp(withCache: boolean): Promise<void> {
    const store = createCallStore(db);
    const deps: ApiDeps = {
      tracerStatus: () => TRACER_STATUS,
      collectorStats: () => COLLECTOR_STATS,
      storeStatus: () => STORE_STATUS,
      store,
      ...(withCache && wiring.status ? { cache: { status: wiring.status } } : {}),
    };
    app = Fastify();
    registerHealth(app, deps);
    registerMetrics(app, deps);
    await app.ready();
  }

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-cache-health-'));
    fs.mkdirSync(results());
    fs.mkdirSync(path.join(ipam(), 'podman-test-net'), { recursive: true });
    fs.copyFileSync(FIXTURE, path.join(results(), path.basename(FIXTURE)));
    fs.writeFileSync(path.join(ipam(), 'podman-test-net', '10.213.205.2'), `${'1'.repeat(64)}\r\neth0`);
    fs.writeFileSync(path.join(results(), 'broken-net-abc-eth0'), '');
    db = openDatabase(path.join(dir, 'c.db'));
    wiring = createCacheWiring(db, { cniCacheDirs: [results(), path.join(dir, 'missing')], hostLocalDirs: [ipam()], cacheRescanMs: 200, db: 'test.db' }, pino({ level: 'silent' }));
  });
  afterEach(async () => {
    await app?.close();
    await wiring.stop();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('healthz shows dirs, entries, problems, open findings and the last rescan, and stays ok despite the broken file', async () => {
    await startApp(true);
    const before = await health();
    expect(before.cache).toMatchObject({ running: false, lastRescanAt: null, lastRescanAgeMs: null });

    await wiring.start();
    await until('finding stored', async () => ((await health()).cache?.openFindings as Record<string, number>)['empty-file'] === 1);
    const h = await health();
    expect(h.status).toBe('ok');
    expect(h.cache).toMatchObject({
      running: true,
      resultDirs: [results(), path.join(dir, 'missing')],
      ipamDirs: [ipam()],
      entries: 1,
      allocations: 1,
      problems: 1,
      openFindings: { 'empty-file': 1 },
      lastError: null,
      droppedWrites: 0,
    });
    // results, networks and networks/podman-test-net; not the missing directory.
    expect(h.cache?.watchedDirs).toBe(3);
    expect(h.cache?.lastRescanAgeMs).toBeGreaterThanOrEqual(0);
    expect(h.cache?.lastRescanAgeMs).toBeLessThan(5000);
  });

  it('metrics gauge the same numbers, every finding kind included', async () => {
    await startApp(true);
    await wiring.start();
    await until('finding stored', async () => (await metric('cnirec_cache_open_findings{kind="empty-file",severity="warning"}')) === 1);
    expect(await metric('cnirec_cache_watcher_up')).toBe(1);
    expect(await metric('cnirec_cache_watched_dirs')).toBe(3);
    expect(await metric('cnirec_cache_entries')).toBe(1);
    expect(await metric('cnirec_cache_ip_allocations')).toBe(1);
    expect(await metric('cnirec_cache_problems')).toBe(1);
    expect(await metric('cnirec_cache_open_findings{kind="leaked-ip",severity="warning"}')).toBe(0);
    const age = await metric('cnirec_cache_last_rescan_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(5);
  });

  it('healthz says null and metrics leave the cache out when the daemon watches no cache', async () => {
    await startApp(false);
    expect((await health()).cache).toBeNull();
    expect(await metric('cnirec_cache_watcher_up')).toBeUndefined();
  });

  it('hands the watcher events to a follower subscribed before start, so the startup scan reaches it', async () => {
    await startApp(true);
    const seen: CacheEvent['type'][] = [];
    const unsubscribe = wiring.subscribe!({ onCacheEvents: (events) => seen.push(...events.map((e) => e.type)) });
    await wiring.start();
    await until('startup scan', () => seen.includes('cache.reconciled'));
    expect(seen).toEqual(expect.arrayContaining(['cache.added', 'ip.allocated', 'cache.problem']));
    unsubscribe();
    fs.unlinkSync(path.join(results(), path.basename(FIXTURE)));
    await until('removal stored', () => wiring.reader!.listCacheEntries({}).length === 0);
    expect(seen).not.toContain('cache.removed');
  });
});
