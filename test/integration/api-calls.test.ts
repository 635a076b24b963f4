// GET /api/v1/calls and /api/v1/calls/:id against a real SQLite store:
// every filter finds exactly the right calls, pages never repeat or skip,
// bad input is refused naming the field, one call comes back in full.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callPageSchema } from '../../api/schemas/call-list.js';
import type { CallSummary } from '../../api/schemas/call-summary.js';
import type { CniCall } from '../../collector/types.js';
import { asRunning, delegatedIpam, getJson, makeCall, makeHelper, startApi, stream, T0_MS, type ApiHarness, type ErrorBody } from './api-harness.js';

interface Page {
  items: CallSummary[];
  nextCursor: string | null;
}

const S = 1_000_000; // µs in a second

// A node's afternoon: a pod set up and torn down, a failure, probes, odd payloads.
const webAdd = makeCall({ at: 0, helpers: [makeHelper({ stderr: stream('iptables: Chain already exists.\n') })] });
const webAddIpam = delegatedIpam(webAdd);
const webCheck = makeCall({ at: 1 * S, command: 'CHECK', durationMs: 8 });
const apiFail = makeCall({ at: 2 * S, podName: 'api-0', exit: 1, durationMs: 250, stderr: stream('failed to allocate for range 0\n') });
const versionProbe = makeCall({ at: 3 * S, command: 'VERSION', noPod: true, containerId: null, durationMs: 1, stdin: stream('{"cniVersion":"1.0.0"}'), stdout: stream('{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}') });
const binaryStdin = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x0a, 0x27, 0x22, 0x80]);
const binary = makeCall({ at: 4 * S, namespace: 'kube-system', podName: 'coredns-1', stdin: stream(binaryStdin), stdout: stream(Buffer.from([0xc3, 0x28])) });
const running = asRunning(makeCall({ at: 5 * S, podName: 'slow-0' }));
const incomplete: CniCall = { ...makeCall({ at: 6 * S, podName: 'lost-0' }), status: 'incomplete', outcome: null, endedAtUs: null, durationUs: null, incompleteReason: 'its exit was not seen' };
const macvlan = makeCall({ at: 7 * S, namespace: 'other', podName: 'db-0', plugin: 'macvlan', durationMs: 30 });
const webDel = makeCall({ at: 10 * S, command: 'DEL', durationMs: 120 });
const webDelIpam = delegatedIpam(webDel);

const ALL = [webAdd, webAddIpam, webCheck, apiFail, versionProbe, binary, running, incomplete, macvlan, webDel, webDelIpam];

let h: ApiHarness;

beforeAll(async () => {
  h = await startApi();
  h.store.writeEvents([{ type: 'call.started', call: running }]);
  h.write(...ALL.filter((c) => c !== running));
});

afterAll(async () => {
  await h.close();
});

async function list(query: string): Promise<Page> {
  const res = await getJson<Page>(h.app, `/api/v1/calls${query ? `?${query}` : ''}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Ids of the calls a query returns, newest first as the API orders them. */
async function ids(query: string): Promise<string[]> {
  return (await list(query)).items.map((c) => c.id);
}

const newestFirst = (...calls: CniCall[]) => [...calls].sort((a, b) => b.startedAtUs - a.startedAtUs || (b.id < a.id ? -1 : 1)).map((c) => c.id);
const withoutProbes = ALL.filter((c) => c !== versionProbe);

describe('listing calls', () => {
  it('is exactly what its zod schema encodes, though served by plain JSON.stringify', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/calls?includeVersion=true&limit=1000' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body: unknown = res.json();
    // The schema strips unknown keys: equal after encoding means no key too many and none missing.
    expect(callPageSchema.parse(body)).toEqual(body);
    expect((body as { items: unknown[] }).items.length).toBeGreaterThan(3);
  });

  it('returns every call but VERSION probes, newest first, as CallSummary objects, with no next page', async () => {
    const page = await list('');
    expect(page.items.map((c) => c.id)).toEqual(newestFirst(...withoutProbes));
    expect(page.nextCursor).toBeNull();
    expect(page.items.find((c) => c.id === webAdd.id)).toMatchObject({
      command: 'ADD',
      plugin: 'bridge',
      path: '/opt/cni/bin/bridge',
      parentId: null,
      parentProcess: { pid: 1234, comm: 'containerd', exe: '/usr/bin/containerd' },
      pod: { namespace: 'demo', name: 'web-0', uid: 'uid-web-0' },
      containerId: 'sandbox-web-0',
      startedAt: '2025-11-21T18:33:20.000Z',
      endedAt: '2025-11-21T18:33:20.042Z',
      durationMs: 42,
      exitCode: 0,
      ok: true,
      status: 'finished',
      isVersionProbe: false,
      payload: { stdin: { bytes: webAdd.stdin.bytes.length, truncated: false } },
    });
  });

  it('filters by namespace', async () => {
    expect(await ids('namespace=kube-system')).toEqual([binary.id]);
  });

  it('filters by pod name', async () => {
    expect(await ids('pod=web-0')).toEqual(newestFirst(webAdd, webAddIpam, webCheck, webDel, webDelIpam));
  });

  it('filters by pod UID', async () => {
    expect(await ids('podUid=uid-api-0')).toEqual([apiFail.id]);
  });

  it('filters by container id', async () => {
    expect(await ids('containerId=sandbox-db-0')).toEqual([macvlan.id]);
  });

  it('filters by command, delegated calls included', async () => {
    expect(await ids('command=DEL')).toEqual(newestFirst(webDel, webDelIpam));
  });

  it('filters by plugin', async () => {
    expect(await ids('plugin=host-local')).toEqual(newestFirst(webAddIpam, webDelIpam));
  });

  it('finds failed calls with failed=true', async () => {
    expect(await ids('failed=true')).toEqual([apiFail.id]);
  });

  it('finds calls that succeeded with failed=false, leaving out running and incomplete ones', async () => {
    expect(await ids('failed=false')).toEqual(newestFirst(...withoutProbes.filter((c) => c !== apiFail && c !== running && c !== incomplete)));
  });

  it('filters by a minimum duration in milliseconds, fractions included', async () => {
    expect(await ids('minDurationMs=100')).toEqual(newestFirst(apiFail, webDel));
    expect(await ids('minDurationMs=119.999')).toEqual(newestFirst(apiFail, webDel));
    expect(await ids('minDurationMs=120.001')).toEqual([apiFail.id]);
  });

  it('filters by status', async () => {
    expect(await ids('status=running')).toEqual([running.id]);
    expect(await ids('status=incomplete')).toEqual([incomplete.id]);
    expect(await ids('status=finished')).not.toContain(running.id);
  });

  it('shows VERSION probes with includeVersion=true, or when asked for command=VERSION', async () => {
    expect(await ids('includeVersion=true')).toEqual(newestFirst(...ALL));
    expect(await ids('command=VERSION')).toEqual([versionProbe.id]);
    expect(await ids('includeVersion=false')).toEqual(newestFirst(...withoutProbes));
  });

  it('combines filters', async () => {
    expect(await ids('namespace=demo&pod=web-0&plugin=bridge&command=ADD')).toEqual([webAdd.id]);
  });

  it('takes since (inclusive) and until (exclusive) as ISO 8601', async () => {
    const since = new Date(T0_MS + 2000).toISOString();
    const until = new Date(T0_MS + 5000).toISOString();
    expect(await ids(`since=${since}&until=${until}`)).toEqual(newestFirst(apiFail, binary));
    expect(await ids(`since=${since}&until=${until}&includeVersion=true`)).toEqual(newestFirst(apiFail, versionProbe, binary));
  });

  it('takes since and until as epoch milliseconds', async () => {
    expect(await ids(`since=${T0_MS + 2000}&until=${T0_MS + 5000}`)).toEqual(newestFirst(apiFail, binary));
  });

  it('takes an ISO instant with an offset and microseconds', async () => {
    // 19:33:22.000001+01:00 is one microsecond after apiFail started.
    expect(await ids('since=2025-11-21T19:33:22.000001%2B01:00&until=2025-11-21T18:33:25Z')).toEqual([binary.id]);
  });

  it('returns an empty page, not an error, when nothing matches', async () => {
    expect(await list('namespace=nobody')).toEqual({ items: [], nextCursor: null });
  });
});

describe('bad list queries', () => {
  async function badRequest(query: string): Promise<ErrorBody['error']> {
    const res = await getJson<ErrorBody>(h.app, `/api/v1/calls?${query}`);
    expect(res.status, query).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    return res.body.error;
  }

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=2.5', 'limit'],
    ['command=add', 'command'],
    ['command=DELETE', 'command'],
    ['since=yesterday', 'since'],
    ['since=2025-02-30', 'since'],
    ['until=12:00', 'until'],
    ['failed=yes', 'failed'],
    ['failed=1', 'failed'],
    ['includeVersion=on', 'includeVersion'],
    ['status=done', 'status'],
    ['minDurationMs=-1', 'minDurationMs'],
    ['minDurationMs=slow', 'minDurationMs'],
    ['namespace=', 'namespace'],
    ['namespace=a&namespace=b', 'namespace'],
    [`since=${T0_MS + 5000}&until=${T0_MS}`, 'until'],
  ])('refuses %s naming %s', async (query, field) => {
    const error = await badRequest(query);
    expect(error.issues?.map((i) => i.path)).toEqual([field]);
    expect(error.issues?.[0]?.message).toBeTruthy();
    // The message names the field too, for clients that print only the message.
    expect(error.message).toContain(field);
  });

  it('names every bad field at once', async () => {
    const error = await badRequest('limit=0&command=add&since=never&failed=maybe');
    expect(error.issues?.map((i) => i.path).sort()).toEqual(['command', 'failed', 'limit', 'since']);
  });

  it.each(['garbage', 'e30', Buffer.from('[1,2]').toString('base64url')])('refuses the cursor %j that it never issued, naming cursor', async (cursor) => {
    const error = await badRequest(`cursor=${cursor}`);
    expect(error.issues?.map((i) => i.path)).toEqual(['cursor']);
  });
});

describe('one call in full', () => {
  interface Detail extends CallSummary {
    stdin: { text: string | null; base64: string; bytes: number; totalBytes: number; truncated: boolean };
    stdout: Detail['stdin'];
    stderr: Detail['stdin'];
    config: unknown;
    result: unknown;
    env: Record<string, string>;
    argv: string[];
    children: CallSummary[];
    helpers: Array<Record<string, unknown> & { stdout: Detail['stdin']; stderr: Detail['stdin'] }>;
    cache: null;
  }

  const get = async (id: string) => {
    const res = await getJson<Detail>(h.app, `/api/v1/calls/${encodeURIComponent(id)}`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('has the summary fields, the payloads as text and base64, and the config and result they parse to', async () => {
    const call = await get(webAdd.id);
    expect(call).toMatchObject({ id: webAdd.id, command: 'ADD', plugin: 'bridge', parentId: null, durationMs: 42, cache: null });
    expect(call.stdin).toEqual({
      text: webAdd.stdin.bytes.toString('utf8'),
      base64: webAdd.stdin.bytes.toString('base64'),
      bytes: webAdd.stdin.bytes.length,
      totalBytes: webAdd.stdin.bytes.length,
      truncated: false,
      redacted: false,
      redactedPointers: [],
    });
    expect(call.config).toEqual(JSON.parse(webAdd.stdin.bytes.toString('utf8')));
    expect(call.result).toMatchObject({ cniVersion: '1.0.0', ips: [{ address: '10.22.0.5/16' }] });
    expect(call.stderr).toMatchObject({ text: '', bytes: 0 });
  });

  it('has the recorded environment and argv', async () => {
    const call = await get(webAdd.id);
    expect(call.env).toEqual(webAdd.env);
    expect(call.argv).toEqual(['/opt/cni/bin/bridge']);
  });

  it('lists its delegated calls as summaries, oldest first', async () => {
    const call = await get(webAdd.id);
    expect(call.children.map((c) => [c.id, c.plugin, c.parentId])).toEqual([[webAddIpam.id, 'host-local', webAdd.id]]);
  });

  it('lists its helpers with their own output as payloads', async () => {
    const [helper] = (await get(webAdd.id)).helpers;
    expect(helper).toMatchObject({
      seq: 0,
      path: '/usr/sbin/iptables',
      argv: webAdd.helpers[0]!.argv,
      startedAt: '2025-11-21T18:33:20.020Z',
      endedAt: '2025-11-21T18:33:20.022Z',
      durationMs: 2.5,
      exitCode: 0,
      signal: null,
    });
    expect(helper!.stderr).toMatchObject({ text: 'iptables: Chain already exists.\n', truncated: false });
    expect(helper!.stdout).toMatchObject({ text: '', bytes: 0 });
  });

  it('names its parent when it was delegated', async () => {
    const call = await get(webAddIpam.id);
    expect(call.parentId).toBe(webAdd.id);
    expect(call.parentProcess).toBeNull();
    expect(call.children).toEqual([]);
  });

  it("shows a failing call's error result and stderr", async () => {
    const call = await get(apiFail.id);
    expect(call).toMatchObject({ exitCode: 1, ok: false });
    expect(call.result).toEqual({ code: 11, msg: 'failed to allocate for range 0: no IP addresses available in range set' });
    expect(call.stderr.text).toBe('failed to allocate for range 0\n');
  });

  it('gives binary payloads as exact base64 with no text, config or result', async () => {
    const call = await get(binary.id);
    expect(call.stdin.text).toBeNull();
    expect(Buffer.from(call.stdin.base64, 'base64').equals(binaryStdin)).toBe(true);
    expect(call.config).toBeNull();
    expect(call.stdout).toMatchObject({ text: null, base64: Buffer.from([0xc3, 0x28]).toString('base64'), bytes: 2 });
    expect(call.result).toBeNull();
  });

  it('shows a running call with no outcome yet', async () => {
    expect(await get(running.id)).toMatchObject({ status: 'running', exitCode: null, ok: null, endedAt: null, durationMs: null });
  });

  it('answers 404 in the error shape for an id nobody recorded', async () => {
    const res = await getJson<ErrorBody>(h.app, '/api/v1/calls/0000000000-nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: expect.stringContaining('0000000000-nope') } });
  });
});

describe('pagination over 250 calls', () => {
  let p: ApiHarness;
  const many: CniCall[] = [];

  beforeAll(async () => {
    p = await startApi();
    for (let i = 0; i < 250; i++) {
      // Every third call shares its start with the previous one: the cursor must break ties by id.
      const at = Math.floor(i - i / 3) * 1000;
      many.push(makeCall({ at, podName: `pod-${i % 5}`, command: i % 4 === 0 ? 'DEL' : 'ADD', pid: 100_000 + i }));
    }
    p.write(...many);
  });

  afterAll(async () => {
    await p.close();
  });

  async function pageThrough(query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const got: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/v1/calls?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await getJson<Page>(p.app, url);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(limit);
      got.push(...res.body.items.map((c) => c.id));
      cursor = res.body.nextCursor;
      if (++pages > 300) throw new Error('pagination does not end');
    } while (cursor !== null);
    return { ids: got, pages };
  }

  it('reaches the end with every call exactly once, newest first', async () => {
    const { ids: got, pages } = await pageThrough('includeVersion=false', 7);
    expect(new Set(got).size).toBe(got.length);
    expect(got).toEqual(newestFirst(...many));
    expect(pages).toBe(Math.ceil(250 / 7));
  });

  it('pages a filtered list the same way', async () => {
    const { ids: got } = await pageThrough('command=DEL&pod=pod-0', 3);
    expect(got).toEqual(newestFirst(...many.filter((c) => c.command === 'DEL' && c.pod?.name === 'pod-0')));
  });

  it('gives 100 calls a page by default, and up to 1000 when asked', async () => {
    const first = await getJson<Page>(p.app, '/api/v1/calls');
    expect(first.body.items).toHaveLength(100);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const all = await getJson<Page>(p.app, '/api/v1/calls?limit=1000');
    expect(all.body.items).toHaveLength(250);
    expect(all.body.nextCursor).toBeNull();
  });

  it('does not shift a page when newer calls arrive between requests', async () => {
    const first = await getJson<Page>(p.app, '/api/v1/calls?limit=10');
    p.write(makeCall({ at: 10_000 * S, podName: 'late-0' }));
    const second = await getJson<Page>(p.app, `/api/v1/calls?limit=10&cursor=${first.body.nextCursor}`);
    expect(second.body.items.map((c) => c.id)).toEqual(newestFirst(...many).slice(10, 20));
  });
});
