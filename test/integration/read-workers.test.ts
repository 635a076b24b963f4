// The daemon's read workers (api/reads/read-worker.ts, built into dist/) answer
// every read route byte for byte as the main thread does over the same
// database, errors included: the worker is only where the work runs.
import { existsSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app.js';
import { createReadOps, type ReadOps } from '../../api/reads/read-ops.js';
import { createReadPool, type ReadPool } from '../../api/reads/read-pool.js';
import type { ReadAnswer } from '../../api/reads/reads.js';
import { createFindingsReader } from '../../store/cache/cache-reader.js';
import { createCacheStore } from '../../store/cache/cache-store.js';
import { createCallLoopDetector } from '../../store/findings/call-loops.js';
import { cacheEntry, delegatedIpam, makeCall, makeHelper, T0_MS } from './api-harness.js';
import { COLLECTOR_STATS, finished, STORE_STATUS, stream, tempStore, TRACER_STATUS, type TempStore } from './harness.js';

const WORKER = path.resolve(import.meta.dirname, '../../dist/api/reads/read-worker.js');
const S = 1_000_000;


const add = makeCall({ at: 0, containerId: 'aaa', helpers: [makeHelper()] });
const ipam = delegatedIpam(add);
// Bytes that are no UTF-8: the detail carries them as base64 only.
const binary = makeCall({ at: 2 * S, command: 'CHECK', containerId: 'aaa', exit: 1, stdout: stream(Buffer.from([0xff, 0xfe, 0x00, 0x41])) });
const dels = [3, 4, 5].map((i) => makeCall({ at: i * S, command: 'DEL', exit: 1, containerId: 'stuck', podName: 'db-0' }));
// The most a call can hold (--max-stream-bytes' default, per stream): text, so the detail carries each twice.
const FOUR_MIB = 4 * 1024 * 1024;
const huge = makeCall({
  at: 6 * S,
  containerId: 'huge',
  stdin: stream(`{"note":"${'n'.repeat(FOUR_MIB - 11)}"}`),
  stdout: stream('o'.repeat(FOUR_MIB)),
  stderr: stream('e'.repeat(FOUR_MIB)),
});

let t: TempStore;
let pool: ReadPool;
let main: ReadOps;
/** The same API over the same database, reading on this thread and in the worker. */
let apps: { inline: FastifyInstance; workers: FastifyInstance };

beforeAll(async () => {
  if (!existsSync(WORKER)) throw new Error(`${WORKER} is missing: run "npm run build" first (npm test does)`);
  t = tempStore('cnirec-read-workers-');
  t.store.writeEvents([add, ipam, binary, ...dels, huge].map(finished));
  const cache = createCacheStore(t.db, { sinceMs: T0_MS - 1000, graceMs: 1000 });
  cache.writeCacheEvents([
    { type: 'cache.reconciled', atMs: T0_MS - 500, dirs: ['/var/lib/cni/results'], livePaths: [], watchingResults: true },
    { type: 'cache.added', entry: cacheEntry('aaa', { cniArgs: [['K8S_POD_NAMESPACE', 'demo'], ['K8S_POD_NAME', 'web-0']], pod: { namespace: 'demo', name: 'web-0', uid: null, infraContainerId: null } }), atMs: T0_MS + 60 },
  ]);
  cache.refresh(T0_MS + 3500);
  createCallLoopDetector(t.db).detect(T0_MS + 60_000);
  const findings = createFindingsReader(t.db);
  main = createReadOps({ store: t.store, cache, findings });
  pool = createReadPool({ dbFile: t.db.name, workers: 1, cacheWatched: true, fallback: main, log: pino({ level: 'silent' }), workerFile: WORKER });
  const deadline = Date.now() + 10_000;
  while (pool.status().ready < 1) {
    if (Date.now() > deadline) throw new Error('the read worker did not start');
    await new Promise((r) => setTimeout(r, 10));
  }
  const app = (reads?: ReadPool) =>
    buildApp({ tracerStatus: () => TRACER_STATUS, collectorStats: () => COLLECTOR_STATS, storeStatus: () => STORE_STATUS, store: t.store, cache, findings, ...(reads ? { reads } : {}) });
  apps = { inline: await app(), workers: await app(pool) };
});

afterAll(async () => {
  await apps.inline.close();
  await apps.workers.close();
  await pool.close();
  t.remove();
});

/** What a read answers, or the error it throws, in a comparable form. */
type Answered = ReadAnswer<Buffer | string> | Buffer | string;
async function outcome(run: () => Promise<Answered> | Answered): Promise<unknown> {
  try {
    const r = await run();
    const v = Buffer.isBuffer(r) || typeof r === 'string' ? r : r.body;
    const seen = Buffer.isBuffer(v) ? { bytes: v.toString('latin1') } : { text: v };
    if (typeof r === 'object' && 'release' in r) r.release();
    return seen;
  } catch (err) {
    const e = err as Error & { status?: number; code?: string };
    return { error: [e.constructor.name, e.status, e.code, e.message] };
  }
}

/** An answer's text, the answer released. */
function text(r: ReadAnswer<Buffer> | Buffer): string {
  if (Buffer.isBuffer(r)) return r.toString();
  const t = r.body.toString();
  r.release();
  return t;
}

describe('the read workers', () => {
  const cases: Array<[string, (r: ReadOps | ReadPool) => Promise<Answered> | Answered]> = [
    ['a page of calls', (r) => r.callPage({ limit: 2, includeVersion: false } as never)],
    ['the next page, by its cursor', async (r) => r.callPage({ limit: 2, cursor: JSON.parse(text(await r.callPage({ limit: 2 } as never))).nextCursor } as never)],
    ['a bad cursor', (r) => r.callPage({ limit: 2, cursor: 'bogus' } as never)],
    ['a call in full, helpers and cache entry', (r) => r.callDetail(add.id)],
    ['a call with bytes that are no UTF-8', (r) => r.callDetail(binary.id)],
    ['a call that is not there', (r) => r.callDetail('nope')],
    ['a replay script', (r) => r.replayScript(add.id)],
    ["a pod's story", (r) => r.podStory({ namespace: 'demo', name: 'web-0' })],
    ['a story in a time window', (r) => r.podStory({ namespace: 'demo', name: 'web-0', sinceUs: add.startedAtUs + 1 })],
    ['a pod that is not there', (r) => r.podStory({ namespace: 'demo', name: 'nobody' })],
    ['the cache entries', (r) => r.cacheEntries({ limit: 10 } as never)],
    ["an IP's history", (r) => r.ipHistory('10.22.0.5')],
    ['the findings, a DEL loop among them', (r) => r.findings({ limit: 10 } as never)],
  ];

  it.each(cases)('answer %s as the main thread does', async (_, read) => {
    const expected = await outcome(() => read(main));
    expect(await outcome(() => read(pool))).toEqual(expected);
  });

  it('answers a call with three 4 MiB payloads within its heap', async () => {
    const detail = JSON.parse(text(await pool.callDetail(huge.id))) as Record<'stdin' | 'stdout' | 'stderr', { bytes: number; text: string }>;
    for (const s of ['stdin', 'stdout', 'stderr'] as const) expect([detail[s].bytes, detail[s].text.length]).toEqual([FOUR_MIB, FOUR_MIB]);
  });

  it.each([
    `/api/v1/pods/demo/web-0`,
    `/api/v1/calls?limit=3`,
    `/api/v1/calls/${add.id}`,
    `/api/v1/calls/${huge.id}`,
    `/api/v1/calls/${add.id}/replay`,
    '/api/v1/cache',
    '/api/v1/findings',
    '/api/v1/calls/nope',
    '/api/v1/calls?cursor=bogus',
  ])('answer GET %s over HTTP as the main thread does, header and bytes', async (url) => {
    const [inline, workers] = await Promise.all([apps.inline.inject({ url }), apps.workers.inject({ url })]);
    expect([workers.statusCode, workers.headers['content-type'], workers.headers['content-length']]).toEqual([inline.statusCode, inline.headers['content-type'], inline.headers['content-length']]);
    expect(workers.rawPayload.equals(inline.rawPayload)).toBe(true);
  });

  it('has every cell back once the responses that sent them have closed', () => {
    expect(pool.status().lentCells).toBe(0);
  });

  it('ran every one of them in the worker', () => {
    expect(pool.status()).toMatchObject({ ready: 1, restarts: 0, fallbackReads: 0 });
  });

  it('found what the cases ask about (they are not all errors)', async () => {
    expect(JSON.parse(text(await pool.findings({ limit: 10 } as never))).items).toEqual([expect.objectContaining({ kind: 'del-loop', containerId: 'stuck' })]);
    expect(JSON.parse(text(await pool.callDetail(add.id)))).toMatchObject({ id: add.id, cache: { containerId: 'aaa' }, helpers: [expect.anything()] });
  });
});
