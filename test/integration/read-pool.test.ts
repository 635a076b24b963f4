// The API's read workers (api/reads/read-pool.ts): requests go to the
// least busy worker, answers and typed errors come back as the routes
// would have made them, and a worker that dies or cannot start never
// stops the API: its reads run on the main thread until it is replaced.
// A stub worker speaks the pool's protocol; read-workers.test.ts runs the real one.
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.js';
import { createReadPool, type ReadPool } from '../../api/reads/read-pool.js';
import type { ReadOps } from '../../api/reads/read-ops.js';

const STUB = fileURLToPath(new URL('./fixtures/read-worker-stub.mjs', import.meta.url));

/** The main thread's reads: each says it ran here. */
const fallback = Object.fromEntries(
  ['callPage', 'callDetail', 'replayScript', 'podStory', 'cacheEntries', 'ipHistory', 'findings'].map((op) => [op, () => (op === 'replayScript' ? 'main thread' : Buffer.from('"main thread"'))]),
) as unknown as ReadOps;

let pool: ReadPool | null = null;
const logLines: string[] = [];

function start(workers: number, dbFile = '/db'): ReadPool {
  const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  pool = createReadPool({ dbFile, workers, cacheWatched: false, fallback, log, workerFile: STUB });
  return pool;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const json = (b: Buffer): unknown => JSON.parse(b.toString('utf8'));

afterEach(async () => {
  await pool?.close();
  pool = null;
  logLines.length = 0;
});

describe('the API read pool', () => {
  it('answers from a worker, with the bytes it encoded as a Buffer fastify sends as it is', async () => {
    const p = start(1);
    await until(() => p.status().ready === 1, 'the worker is up');
    const answer = await p.callPage({ limit: 5 } as never);
    expect(Buffer.isBuffer(answer.body)).toBe(true);
    // What fastify checks before it writes a payload as it is (it would JSON-encode anything else).
    expect(answer.body.buffer).toBeInstanceOf(ArrayBuffer);
    expect(json(answer.body)).toEqual({ op: 'callPage', args: [{ limit: 5 }] });
    answer.release();
    expect(p.status()).toMatchObject({ workers: 1, ready: 1, inFlight: 0, restarts: 0, fallbackReads: 0 });
  });

  it('lends each answer a cell until it is released, and posts answers while none is free', async () => {
    const p = start(1);
    await until(() => p.status().ready === 1, 'the worker is up');
    const lent = await Promise.all(Array.from({ length: 8 }, (_, i) => p.callPage({ n: i } as never)));
    // Each in its own cell: none overwrote another.
    expect(lent.map((a) => json(a.body))).toEqual(lent.map((_, i) => ({ op: 'callPage', args: [{ n: i }] })));
    const cellsOf = new Set(lent.map((a) => a.body.buffer));
    expect(cellsOf.size).toBe(1);
    const posted = await p.callPage({ n: 8 } as never);
    expect(cellsOf.has(posted.body.buffer)).toBe(false);
    expect(json(posted.body)).toEqual({ op: 'callPage', args: [{ n: 8 }] });
    lent[2]!.release();
    lent[2]!.release(); // twice is once
    const again = await p.callPage({ n: 9 } as never);
    expect(cellsOf.has(again.body.buffer)).toBe(true);
    expect(again.body.byteOffset).toBe(lent[2]!.body.byteOffset);
    expect(json(again.body)).toEqual({ op: 'callPage', args: [{ n: 9 }] });
    // The other seven still hold what they were answered.
    const others = [0, 1, 3, 4, 5, 6, 7];
    expect(others.map((i) => json(lent[i]!.body))).toEqual(others.map((i) => ({ op: 'callPage', args: [{ n: i }] })));
  });

  it("brings a worker's API error back as the same ApiError, for the one error handler", async () => {
    const p = start(1);
    await until(() => p.status().ready === 1, 'the worker is up');
    const err = await p.callDetail('nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 404, code: 'not_found', message: 'No call with id "nope"' });
  });

  it('sends a request to the worker with the fewest in flight', async () => {
    const p = start(2);
    await until(() => p.status().ready === 2, 'both workers are up');
    const idle = (await p.replayScript('a')).body;
    const slow = p.callPage({ delayMs: 300 } as never);
    const beside = (await p.replayScript('b')).body;
    await slow;
    // The slow page went to the first worker, so the second answered meanwhile.
    expect(idle).toMatch(/^thread \d+$/);
    expect(beside).toMatch(/^thread \d+$/);
    expect(beside).not.toBe(idle);
  });

  it('fails the reads a dying worker held, answers on the main thread meanwhile, and replaces the worker', async () => {
    const p = start(1);
    await until(() => p.status().ready === 1, 'the worker is up');
    await expect(p.podStory({ namespace: 'demo', name: 'web-0' })).rejects.toThrow(/read worker stopped.*exit code 7/);
    expect((await p.replayScript('x')).body).toBe('main thread');
    await until(() => p.status().ready === 1, 'a new worker is up');
    expect((await p.replayScript('y')).body).toMatch(/^thread \d+$/);
    expect(p.status()).toMatchObject({ restarts: 1, fallbackReads: 1 });
    expect(logLines.filter((l) => l.includes('an API read worker stopped'))).toHaveLength(1);
  });

  it('keeps answering on the main thread when no worker can start, and says so once', async () => {
    const p = start(1, '/nonexistent');
    await until(() => p.status().restarts >= 3, 'the worker was retried');
    expect(json((await p.callPage({ limit: 1 } as never)).body)).toBe('main thread');
    expect(p.status().ready).toBe(0);
    const said = logLines.filter((l) => l.includes('an API read worker stopped'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('cannot open the database (stub)');
  });
});
