/**
 * Random and hostile requests against every route of the OpenAPI document,
 * in-process against a seeded SQLite store: huge, negative, fractional, NaN
 * and exponent numbers, SQL and LIKE metacharacters, unicode, NUL bytes and
 * very long strings in every filter, forged cursors, bad ids and pod names,
 * unknown parameters, wrong methods and bodies. Only 4xx (in the error
 * shape) or 200 with exactly the right results, never a 5xx. Seeded (see
 * test/support/fuzz.ts: FC_SEED, FC_RUNS).
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBodySchema } from '../../api/schemas/error.js';
import type { CniCall } from '../../collector/types.js';
import { fcParams } from '../support/fuzz.js';
import { asRunning, makeCall, startApi, type ApiHarness } from './api-harness.js';

const S = 1_000_000;

// Values chosen so a filter that were not a bound parameter would show: a quote, LIKE wildcards.
const seeded: CniCall[] = [
  makeCall({ at: 0 }),
  makeCall({ at: 1 * S, command: 'DEL' }),
  makeCall({ at: 2 * S, podName: 'web-1', exit: 1 }),
  makeCall({ at: 3 * S, namespace: "o'brien", podName: '100%_done', plugin: 'macvlan' }),
  makeCall({ at: 4 * S, command: 'VERSION', noPod: true, containerId: null }),
  makeCall({ at: 5 * S, namespace: 'kube-system', podName: 'coredns-0', killedBy: 9 }),
  { ...makeCall({ at: 6 * S, podName: 'lost-0' }), status: 'incomplete', outcome: null, endedAtUs: null, durationUs: null, incompleteReason: 'exit not seen' },
];
const running = asRunning(makeCall({ at: 7 * S, podName: 'slow-0' }));

let h: ApiHarness;
let requests = 0;

beforeAll(async () => {
  h = await startApi({ cache: true });
  h.store.writeEvents([{ type: 'call.started', call: running }]);
  h.write(...seeded);
});

afterAll(async () => {
  await h?.close();
  console.log(`fuzz-api: ${requests} requests`);
});

// ---- hostile values ------------------------------------------------------------

const INJECTIONS = [
  "' OR 1=1 --",
  "' OR '1'='1",
  '" OR ""="',
  "'; DROP TABLE calls; --",
  '1; SELECT * FROM calls',
  ') OR (1=1',
  '%',
  '_',
  '%%',
  'web-%',
  '100%',
  '*',
  '\\',
  '\u0000',
  'demo\u0000',
  "o'brien\u0000' OR 1=1 --",
  '🙂',
  '\u202eevil',
  'ǅ',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-1',
  '0',
  '-0',
  '1.5',
  '9007199254740993',
  '99999999999999999999999',
  '0x10',
  '1e3',
  '',
  ' ',
  'true',
  'TRUE',
  'null',
  'undefined',
  '[]',
  '{}',
  '__proto__',
  'constructor',
];
const REAL_VALUES = ['demo', 'web-0', 'web-1', "o'brien", '100%_done', 'kube-system', 'bridge', 'macvlan', 'uid-web-0', 'sandbox-web-0', 'ADD', 'DEL', 'VERSION', 'finished', 'incomplete', 'running', 'true', 'false'];
const TIMES = ['2025-11-21T18:33:20Z', '2025-02-30', '2025-13-01', '0000-01-01', '9999-12-31T23:59:59.999999999+14:00', '1763750000000', '99999999999999999', '2025-11-21T25:00', 'yesterday', '2025-11-21T18:33:20,5Z'];

const hostile: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...REAL_VALUES) },
  { weight: 2, arbitrary: fc.constantFrom(...TIMES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 240, maxLength: 5_000 }) },
  { weight: 2, arbitrary: fc.oneof(fc.double(), fc.integer(), fc.bigInt()).map(String) },
  { weight: 1, arbitrary: fc.constantFrom(...INJECTIONS).chain((i) => fc.constantFrom(...REAL_VALUES).map((r) => `${r}${i}`)) },
);

/** Forged cursors: valid base64url, wrong content (and a few of the right shape). */
const forgedCursor: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url')),
  fc.tuple(fc.oneof(fc.integer(), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER)), fc.oneof(fc.string(), fc.constantFrom(...INJECTIONS))).map((pair) => Buffer.from(JSON.stringify(pair)).toString('base64url')),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a).toString('base64')),
);

/** Percent-encodes the UTF-8 bytes of `s` (what the server decodes is `decoded(s)`). */
function enc(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
  return out;
}
const decoded = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

// ---- checking answers -----------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

async function send(method: string, url: string, opts: { payload?: string; contentType?: string } = {}): Promise<Answer> {
  requests++;
  const res = await h.app.inject({
    method: method as 'GET',
    url,
    ...(opts.payload !== undefined ? { payload: opts.payload } : {}),
    headers: opts.contentType ? { 'content-type': opts.contentType } : {},
  });
  const type = String(res.headers['content-type'] ?? '');
  const body = type.includes('json') && res.body.length > 0 ? (JSON.parse(res.body) as unknown) : res.body;
  return { status: res.statusCode, body };
}

/** Never a 5xx; a 4xx always in the one error shape. */
function expectNoServerError(a: Answer, what: string): void {
  expect(a.status, `${what} → ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`).toBeLessThan(500);
  if (a.status >= 400 && a.status !== 405 && typeof a.body === 'object') {
    expect(errorBodySchema.safeParse(a.body).success, `${what}: error shape ${JSON.stringify(a.body).slice(0, 300)}`).toBe(true);
  }
}

// ---- /api/v1/calls filters against an oracle ----------------------------------------

type Filters = Partial<Record<'namespace' | 'pod' | 'podUid' | 'containerId' | 'command' | 'plugin' | 'status' | 'failed' | 'includeVersion', string>>;

const COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'];
const STATUSES = ['running', 'finished', 'incomplete'];

/** Whether the query schema takes these values; the reason when not. */
function refusal(f: Filters): string | null {
  for (const key of ['namespace', 'pod', 'podUid', 'containerId', 'plugin'] as const) {
    const v = f[key];
    if (v !== undefined && (v.length < 1 || v.length > 253)) return `${key} length ${v.length}`;
  }
  if (f.command !== undefined && !COMMANDS.includes(f.command)) return 'command';
  if (f.status !== undefined && !STATUSES.includes(f.status)) return 'status';
  for (const key of ['failed', 'includeVersion'] as const) if (f[key] !== undefined && f[key] !== 'true' && f[key] !== 'false') return key;
  return null;
}

/** What the store must answer: plain equality on every field, nothing pattern-like. */
function expectedIds(f: Filters): string[] {
  const all = [...seeded, running];
  return all
    .filter((c) => f.namespace === undefined || c.pod?.namespace === f.namespace)
    .filter((c) => f.pod === undefined || c.pod?.name === f.pod)
    .filter((c) => f.podUid === undefined || c.pod?.uid === f.podUid)
    .filter((c) => f.containerId === undefined || c.containerId === f.containerId)
    .filter((c) => f.command === undefined || c.command === f.command)
    .filter((c) => f.plugin === undefined || c.plugin === f.plugin)
    .filter((c) => f.status === undefined || c.status === f.status)
    .filter((c) => {
      if (f.failed === undefined) return true;
      const ok = c.outcome === null ? null : c.outcome.exitCode === 0 && c.outcome.signal === null;
      return f.failed === 'true' ? ok === false : ok === true;
    })
    .filter((c) => f.includeVersion === 'true' || f.command === 'VERSION' || !c.isVersionProbe)
    .map((c) => c.id)
    .sort();
}

describe('GET /api/v1/calls with hostile filter values', () => {
  const filterValue = fc.oneof(hostile, fc.constantFrom(...REAL_VALUES));
  const KEYS = ['namespace', 'pod', 'podUid', 'containerId', 'command', 'plugin', 'status', 'failed', 'includeVersion'] as const;
  // One to three filters: more would nearly always match nothing, hiding a filter that matches too much.
  const filters: fc.Arbitrary<Filters> = fc
    .uniqueArray(fc.tuple(fc.constantFrom(...KEYS), filterValue), { minLength: 1, maxLength: 3, selector: ([k]) => k })
    .map((pairs) => Object.fromEntries(pairs));

  it('answers exactly the calls equal to each value (injection strings find nothing), or 400 naming a bad field', async () => {
    await fc.assert(
      fc.asyncProperty(filters, async (raw) => {
        const f: Filters = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, decoded(v)]));
        const query = Object.entries(raw).map(([k, v]) => `${k}=${enc(v)}`);
        const a = await send('GET', `/api/v1/calls?${[...query, 'limit=1000'].join('&')}`);
        expectNoServerError(a, JSON.stringify(f));
        const why = refusal(f);
        if (why !== null) {
          expect(a.status, why).toBe(400);
          return;
        }
        expect(a.status, JSON.stringify(a.body).slice(0, 300)).toBe(200);
        const ids = (a.body as { items: Array<{ id: string }> }).items.map((c) => c.id).sort();
        expect(ids).toEqual(expectedIds(f));
      }),
      fcParams(1_200),
    );
  });

  it('the seeded values with quotes and LIKE wildcards match only themselves', async () => {
    const get = async (q: string) => ((await send('GET', `/api/v1/calls?${q}`)).body as { items: Array<{ id: string }> }).items.map((c) => c.id);
    expect(await get(`namespace=${enc("o'brien")}`)).toEqual([seeded[3]!.id]);
    expect(await get(`pod=${enc('100%_done')}`)).toEqual([seeded[3]!.id]);
    expect(await get(`pod=${enc('100%')}`)).toEqual([]);
    expect(await get(`pod=${enc('web-_')}`)).toEqual([]);
    expect(await get(`namespace=${enc("' OR 1=1 --")}`)).toEqual([]);
  });
});

// ---- every route -----------------------------------------------------------------

const ROUTES = [
  { method: 'GET', path: '/healthz', query: [] },
  { method: 'GET', path: '/api/v1/calls', query: ['namespace', 'pod', 'podUid', 'containerId', 'command', 'plugin', 'failed', 'minDurationMs', 'since', 'until', 'includeVersion', 'status', 'limit', 'cursor'] },
  { method: 'GET', path: '/api/v1/calls/{id}', query: [] },
  { method: 'GET', path: '/api/v1/calls/{id}/replay', query: [] },
  { method: 'GET', path: '/api/v1/pods/{namespace}/{name}', query: ['podUid'] },
  { method: 'GET', path: '/api/v1/tracer', query: [] },
  { method: 'GET', path: '/api/v1/cache', query: ['containerId', 'network', 'pod', 'includeRemoved', 'limit'] },
  { method: 'GET', path: '/api/v1/ips/{ip}', query: [] },
  { method: 'GET', path: '/api/v1/findings', query: ['kind', 'includeResolved', 'limit'] },
  { method: 'GET', path: '/api/v1/tail', query: ['namespace', 'since', 'failed'] },
  { method: 'GET', path: '/metrics', query: [] },
  { method: 'GET', path: '/api/v1/openapi.json', query: [] },
] as const;
const UNKNOWN_PARAMS = ['foo', 'namespace[]', '__proto__', 'constructor', 'toString', 'limit[$gt]', 'a.b', ''];
const NUMBERS = ['0', '-1', '1', '1000', '1001', '1e3', '1e400', '-1e400', 'NaN', 'Infinity', '1.5', '0.0001', '9007199254740993', '99999999999999999999999', '0x10', '', ' 5 ', '1_000'];

/** Path parameter values as they could arrive: encoded, raw, broken encodings. */
const pathValue: fc.Arbitrary<string> = fc.oneof(
  hostile.map(enc),
  fc.constantFrom('%', '%zz', '%00', '%2F', '..', '.', '%E0%A4%A', '%C0%AF', 'a%2Fb', 'x'.repeat(1_100), seeded[0]!.id, '0'),
);

interface Request {
  readonly method: string;
  readonly url: string;
}

const anyRequest: fc.Arbitrary<Request> = fc
  .record({
    route: fc.constantFrom(...ROUTES),
    method: fc.oneof({ weight: 8, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') }),
    params: fc.array(pathValue, { minLength: 2, maxLength: 2 }),
    query: fc.array(fc.tuple(fc.oneof(fc.nat(), fc.constantFrom(...UNKNOWN_PARAMS)), fc.oneof(hostile.map(enc), fc.constantFrom(...NUMBERS).map(enc), forgedCursor.map(enc))), { maxLength: 6 }),
  })
  .map(({ route, method, params, query }) => {
    let i = 0;
    const path = route.path.replace(/\{[a-z]+\}/g, () => params[i++]!);
    const q = query.map(([key, value]) => `${typeof key === 'number' ? (route.query[key % Math.max(1, route.query.length)] ?? 'x') : enc(key)}=${value}`);
    return { method, url: q.length > 0 ? `${path}?${q.join('&')}` : path };
  });

describe('every route with hostile input', () => {
  it('answers 2xx or 4xx in the error shape, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(anyRequest, async (r) => {
        const a = await send(r.method, r.url);
        expectNoServerError(a, `${r.method} ${r.url.slice(0, 200)}`);
        if (a.status === 200 && r.method === 'GET' && r.url.startsWith('/api/v1/calls?')) {
          const body = a.body as { items: unknown[]; nextCursor: unknown };
          expect(Array.isArray(body.items) && body.items.length <= 1000).toBe(true);
          expect(body.nextCursor === null || typeof body.nextCursor === 'string').toBe(true);
        }
      }),
      fcParams(1_500),
    );
  });

  it('refuses forged cursors with 400 naming the cursor, or pages below a well-formed one', async () => {
    await fc.assert(
      fc.asyncProperty(forgedCursor, async (cursor) => {
        const a = await send('GET', `/api/v1/calls?limit=1000&cursor=${enc(cursor)}`);
        expectNoServerError(a, cursor);
        if (a.status === 400) {
          const issues = (a.body as { error: { issues?: Array<{ path: string }> } }).error.issues ?? [];
          expect(issues.map((i) => i.path)).toContain('cursor');
        } else {
          expect(a.status).toBe(200);
          const ids = (a.body as { items: Array<{ id: string }> }).items.map((c) => c.id);
          for (const id of ids) expect(expectedIds({})).toContain(id);
        }
      }),
      fcParams(400),
    );
  });

  it('PUT /api/v1/tracer/mode: any body, any content type, never a 5xx', async () => {
    const body = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
      fc.constantFrom('{"mode":"full"}', '{"mode":"light"}', '{"mode":"fast"}', '{"mode":"full","x":1}', '{"mode":null}', '{', '', 'null', '"full"', '{"__proto__":{"mode":"light"}}', `{"mode":"${'x'.repeat(100_000)}"}`),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''), async (payload, contentType) => {
        const a = await send('PUT', '/api/v1/tracer/mode', { payload, contentType });
        expectNoServerError(a, `${contentType} ${payload.slice(0, 100)}`);
      }),
      fcParams(300),
    );
  });
});
