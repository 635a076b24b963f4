// GET /api/v1/bundle and GET /api/v1/source in-process, with a fake bundle maker: what the route reads of the
// daemon for a bundle, how it streams the file, its refusals (one at a time, bad filters, a maker's refusal)
// and the source of a live node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import type { BundleDeps, DaemonReadings } from '../../api/deps.js';
import type { BundleQuery } from '../../api/schemas/bundle.js';
import { COLLECTOR_STATS, STORE_STATUS, TRACER_STATUS, tempStore, type TempStore } from './harness.js';

let t: TempStore | null = null;
afterEach(() => {
  t?.remove();
  t = null;
});

async function app(bundle: BundleDeps | undefined, token: string | null = null) {
  t = tempStore('cnirec-api-bundle-');
  return buildApp({ tracerStatus: () => TRACER_STATUS, collectorStats: () => COLLECTOR_STATS, storeStatus: () => STORE_STATUS, store: t.store, token, version: '9.9.9', ...(bundle ? { bundle } : {}) });
}

describe('GET /api/v1/bundle', () => {
  it("streams the file the daemon made, named, after reading the daemon's own state with the caller's token", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-b-')), 'x.tar.gz');
    fs.writeFileSync(file, Buffer.from([0x1f, 0x8b, 1, 2, 3]));
    const asked: { query: BundleQuery; readings: DaemonReadings }[] = [];
    let cleaned = false;
    const a = await app(
      {
        async make(query, readings) {
          asked.push({ query, readings });
          return { ok: true, file, name: 'cnirec-n-x.tar.gz', cleanup: async () => void (cleaned = true) };
        },
      },
      'tok',
    );
    const res = await a.inject({ method: 'GET', url: '/api/v1/bundle?pod=demo/web-0,demo/web-1&call=abc&since=2h&payloads=false', headers: { authorization: 'Bearer tok' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="cnirec-n-x.tar.gz"');
    expect(res.rawPayload.equals(fs.readFileSync(file))).toBe(true);
    expect(asked[0]!.query).toMatchObject({ pod: ['demo/web-0', 'demo/web-1'], call: ['abc'], payloads: false });
    expect(asked[0]!.readings.health).toMatchObject({ status: expect.any(String) });
    expect(asked[0]!.readings.tracer).toMatchObject({ running: true });
    expect(asked[0]!.readings.metrics).toContain('cnirec_build_info');
    // A daemon that asks no runtime (501 on its routes) has none to give: the bundle says nothing of it.
    expect(asked[0]!.readings).toMatchObject({ runtime: null, gcPlan: null });
    await new Promise((r) => setTimeout(r, 50));
    expect(cleaned).toBe(true);
    expect((await a.inject({ method: 'GET', url: '/api/v1/bundle' })).statusCode).toBe(401);
    await a.close();
  });

  it('makes one at a time, refuses bad filters, and passes on a refusal', async () => {
    let release: () => void = () => undefined;
    const a = await app({
      make: (query) =>
        query.call?.[0] === 'missing'
          ? Promise.resolve({ ok: false, status: 404, message: 'No call missing is recorded on this node.' })
          : new Promise((resolve) => (release = () => resolve({ ok: false, status: 413, message: 'too big' }))),
    });
    const first = a.inject({ method: 'GET', url: '/api/v1/bundle' });
    await new Promise((r) => setTimeout(r, 50));
    const busy = await a.inject({ method: 'GET', url: '/api/v1/bundle' });
    expect(busy.statusCode).toBe(503);
    expect(busy.headers['retry-after']).toBe('5');
    release();
    expect((await first).statusCode).toBe(413);
    expect((await a.inject({ method: 'GET', url: '/api/v1/bundle?call=missing' })).json()).toMatchObject({ error: { code: 'not_found', message: 'No call missing is recorded on this node.' } });
    const bad = await a.inject({ method: 'GET', url: '/api/v1/bundle?pod=no-slash&podUid=u' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/pod/);
    expect((await a.inject({ method: 'GET', url: '/api/v1/bundle?podUid=u' })).statusCode).toBe(400);
    expect((await a.inject({ method: 'GET', url: '/api/v1/bundle?nope=1' })).statusCode).toBe(400);
    await a.close();
  });

  it('answers 501 where no bundle can be made', async () => {
    const a = await app(undefined);
    expect((await a.inject({ method: 'GET', url: '/api/v1/bundle' })).statusCode).toBe(501);
    await a.close();
  });
});

describe('GET /api/v1/source', () => {
  it('says a live node, and carries no bundle header', async () => {
    const a = await app(undefined);
    const res = await a.inject({ method: 'GET', url: '/api/v1/source' });
    expect(res.json()).toMatchObject({ kind: 'node', cnirec: '9.9.9', bundle: null });
    expect(res.headers['cnirec-bundle']).toBeUndefined();
    await a.close();
  });
});
