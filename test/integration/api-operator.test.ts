/**
 * What the API tells an operator, and what it refuses: unknown parameters
 * named instead of ignored, the findings page (worst first, with a total,
 * counts and a cursor), a failed call's error on its summary, and /healthz
 * degraded after the tracer lost records.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthSchema } from '../../api/schemas/health.js';
import { createFindingsLog } from '../../store/findings/cache-findings.js';
import { getJson, makeCall, startApi, stream, T0_MS, type ApiHarness, type ErrorBody } from './api-harness.js';

let h: ApiHarness;
const failed = makeCall({ at: 1_000_000, exit: 1, stdout: stream('{"code":11,"msg":"no IP addresses available","details":"range 10.22.0.0/16 is full"}') });
const crashed = makeCall({ at: 2_000_000, exit: 2, stdout: stream(), stderr: stream('panic: runtime error: invalid memory address\n\ngoroutine 1 [running]:\n') });
const ok = makeCall({ at: 3_000_000 });

beforeAll(async () => {
  h = await startApi({ cache: true });
  h.write(failed, crashed, ok);
  const log = createFindingsLog(h.db);
  log.open('add-without-cache', 'call-1', { message: 'no cache', callId: 'call-1', podNamespace: 'demo', podName: 'web-0' }, T0_MS + 50);
  log.open('add-without-cache', 'call-2', { message: 'no cache', callId: 'call-2' }, T0_MS + 60);
  log.open('del-loop', 'ctr/eth0', { message: 'DEL loops', podNamespace: 'demo', podName: 'stuck', count: 9, containerId: 'ctr' }, T0_MS);
  log.open('leaked-ip', '/ipam/10.22.0.9', { message: 'leak', ip: '10.22.0.9' }, T0_MS + 10);
});
afterAll(async () => h.close());

describe('unknown query parameters', () => {
  it.each([
    ['/api/v1/calls?namepsace=prod', 'namepsace'],
    ['/api/v1/pods/demo/web-0?sinse=1h', 'sinse'],
    ['/api/v1/findings?kinds=del-loop', 'kinds'],
    ['/api/v1/cache?pods=demo/web-0', 'pods'],
    ['/healthz?probe=readiness&verbose=1', 'verbose'],
  ])('%s is a 400 naming %s, not an unfiltered answer', async (url, field) => {
    const res = await getJson<ErrorBody>(h.app, url);
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: field, message: 'Unknown field' }]);
    expect(res.body.error.message).toBe(`Invalid query: ${field}: Unknown field`);
  });
});

describe("a failed call's error", () => {
  it('is on its summary: the CNI error with its details, else the first line of what it printed', async () => {
    const { body } = await getJson<{ items: Array<{ id: string; error: string | null }> }>(h.app, '/api/v1/calls');
    const errorOf = (id: string) => body.items.find((c) => c.id === id)?.error;
    expect(errorOf(failed.id)).toBe('no IP addresses available: range 10.22.0.0/16 is full');
    expect(errorOf(crashed.id)).toBe('panic: runtime error: invalid memory address');
    expect(errorOf(ok.id)).toBeNull();
  });
});

describe('GET /api/v1/findings', () => {
  it('answers the worst first, with the total, the counts by kind and a cursor', async () => {
    const { status, body } = await getJson<{ items: Array<{ kind: string; severity: string; pod: unknown; count: number | null }>; total: number; byKind: unknown[]; nextCursor: string | null }>(
      h.app,
      '/api/v1/findings?limit=2',
    );
    expect(status).toBe(200);
    expect(body.items.map((f) => `${f.severity} ${f.kind}`)).toEqual(['critical del-loop', 'warning leaked-ip']);
    expect(body.items[0]).toMatchObject({ pod: { namespace: 'demo', name: 'stuck' }, count: 9 });
    expect(body.total).toBe(4);
    expect(body.byKind).toEqual([
      { kind: 'del-loop', severity: 'critical', count: 1 },
      { kind: 'leaked-ip', severity: 'warning', count: 1 },
      { kind: 'add-without-cache', severity: 'info', count: 2 },
    ]);
    const next = await getJson<{ items: Array<{ kind: string }>; nextCursor: string | null }>(h.app, `/api/v1/findings?limit=2&cursor=${body.nextCursor}`);
    expect(next.body.items.map((f) => f.kind)).toEqual(['add-without-cache', 'add-without-cache']);
    expect(next.body.nextCursor).toBeNull();
  });

  it.each([
    ['kind=del-loop,leaked-ip', 2],
    ['kind=del-loop&kind=leaked-ip', 2],
    ['severity=info', 2],
    ['severity=critical&kind=leaked-ip', 0],
    ['pod=demo/web-0', 1],
  ])('filters by %s', async (query, total) => {
    const { status, body } = await getJson<{ total: number; items: unknown[] }>(h.app, `/api/v1/findings?${query}`);
    expect(status).toBe(200);
    expect(body.total).toBe(total);
    expect(body.items).toHaveLength(total);
  });

  it('names an unknown kind', async () => {
    const { status, body } = await getJson<ErrorBody>(h.app, '/api/v1/findings?kind=del-loop,del-lop');
    expect(status).toBe(400);
    expect(body.error.message).toContain('Unknown kind "del-lop"');
  });
});

describe('/healthz', () => {
  it('is degraded, with the count, once the tracer has lost records, and its body is what the document says', async () => {
    const before = await getJson(h.app, '/healthz');
    expect(before.body).toMatchObject({ status: 'ok', problems: [] });
    expect(healthSchema.safeParse(before.body).success).toBe(true);
    h.tracer = { ...h.tracer, lostEvents: 11_466 };
    const after = await getJson<{ status: string; problems: string[]; tracer: { recentLostEvents: number } }>(h.app, '/healthz');
    expect(after.body.status).toBe('degraded');
    expect(after.body.tracer.recentLostEvents).toBe(11_466);
    expect(after.body.problems).toEqual([expect.stringContaining('The tracer lost 11,466 records in the last 10 minutes')]);
    expect(healthSchema.safeParse(after.body).success).toBe(true);
  });
});
