// GET /api/v1/pods/:namespace/:name: a pod's story as trees of calls,
// grouped by sandbox, with the time each command took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { podStorySchema, type CallTree, type PodStory } from '../../api/schemas/pod-story.js';
import { createCallLoopDetector } from '../../store/findings/call-loops.js';
import { delegatedIpam, getJson, makeCall, makeHelper, startApi, T0_MS, type ApiHarness, type ErrorBody } from './api-harness.js';

const S = 1_000_000;

// web-0: VERSION probe, ADD (bridge → host-local, with an iptables helper), CHECK, DEL (bridge → host-local);
// then its sandbox is recreated and ADDed again. The name is later reused by a new pod (another UID).
const probe = makeCall({ at: 0, command: 'VERSION', durationMs: 1 });
const add = makeCall({ at: 1 * S, durationMs: 40.5, helpers: [makeHelper(), makeHelper({ path: '/usr/sbin/ip', argv: ['ip', 'link', 'set', 'veth1', 'up'] })] });
const addIpam = delegatedIpam(add, { durationMs: 3.25 });
// A delegated call need not carry the pod's CNI_ARGS: it belongs to its parent all the same.
const addIpamChild = makeCall({ at: 1 * S + 6_000, plugin: 'static', parentId: addIpam.id, ppid: addIpam.pid, noPod: true, durationMs: 0.5 });
const check = makeCall({ at: 2 * S, command: 'CHECK', durationMs: 7 });
const del = makeCall({ at: 3 * S, command: 'DEL', durationMs: 20 });
const delIpam = delegatedIpam(del, { durationMs: 2 });
const secondSandboxAdd = makeCall({ at: 4 * S, containerId: 'sandbox-web-0-b', durationMs: 50 });
const reusedName = makeCall({ at: 9 * S, podUid: 'uid-web-0-new', containerId: 'sandbox-web-0-new', durationMs: 33 });
const otherPod = makeCall({ at: 5 * S, podName: 'api-0' });

let h: ApiHarness;

beforeAll(async () => {
  h = await startApi();
  h.write(probe, add, addIpam, addIpamChild, check, del, delIpam, secondSandboxAdd, reusedName, otherPod);
});

afterAll(async () => {
  await h.close();
});

async function story(query = ''): Promise<PodStory> {
  const res = await getJson<PodStory>(h.app, `/api/v1/pods/demo/web-0${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const shape = (t: CallTree): unknown => [t.command, t.plugin, t.children.map(shape)];

describe("a pod's story", () => {
  it('is exactly what its zod schema encodes, though served by a faster serializer', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/pods/demo/web-0' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body: unknown = res.json();
    // The schema strips unknown keys: equal after encoding means no key too many and none missing.
    expect(podStorySchema.parse(body)).toEqual(body);
    // Each tree is written once and reused under its sandbox; both places say the same.
    const s = body as PodStory;
    expect(s.sandboxes.flatMap((b) => b.calls)).toEqual(s.calls);
  });

  it('names the pod, with the latest UID and every UID seen under the name', async () => {
    expect((await story()).pod).toEqual({ namespace: 'demo', name: 'web-0', uid: 'uid-web-0-new', uids: ['uid-web-0', 'uid-web-0-new'] });
  });

  it('lists top-level calls oldest first, each with its delegated calls nested', async () => {
    const s = await story();
    expect(s.calls.map((c) => c.id)).toEqual([probe.id, add.id, check.id, del.id, secondSandboxAdd.id, reusedName.id]);
    expect(s.calls.map(shape)).toEqual([
      ['VERSION', 'bridge', []],
      ['ADD', 'bridge', [['ADD', 'host-local', [['ADD', 'static', []]]]]],
      ['CHECK', 'bridge', []],
      ['DEL', 'bridge', [['DEL', 'host-local', []]]],
      ['ADD', 'bridge', []],
      ['ADD', 'bridge', []],
    ]);
  });

  it('gives each call the fields cnirec demo prints, and its helpers as summaries', async () => {
    const tree = (await story()).calls[1]!;
    expect(tree).toMatchObject({ id: add.id, command: 'ADD', plugin: 'bridge', durationMs: 40.5, exitCode: 0, signal: null });
    expect(tree.helpers.map((x) => [x.seq, x.path, x.argv[0], x.durationMs, x.exitCode])).toEqual([
      [0, '/usr/sbin/iptables', 'iptables', 2.5, 0],
      [1, '/usr/sbin/ip', 'ip', 2.5, 0],
    ]);
    expect(tree.helpers[0]!.payload).toEqual({ stdout: { bytes: 0, totalBytes: 0, truncated: false }, stderr: { bytes: 0, totalBytes: 0, truncated: false } });
    expect(tree.children[0]).toMatchObject({ id: addIpam.id, parentId: add.id, helpers: [] });
  });

  it('groups the same trees by sandbox, in order of their first call', async () => {
    const s = await story();
    expect(s.sandboxes.map((x) => [x.containerId, x.podUid, x.startedAt, x.calls.map((c) => c.id)])).toEqual([
      ['sandbox-web-0', 'uid-web-0', '2025-11-21T18:33:20.000Z', [probe.id, add.id, check.id, del.id]],
      ['sandbox-web-0-b', 'uid-web-0', '2025-11-21T18:33:24.000Z', [secondSandboxAdd.id]],
      ['sandbox-web-0-new', 'uid-web-0-new', '2025-11-21T18:33:29.000Z', [reusedName.id]],
    ]);
    expect(s.sandboxes[0]!.calls[1]!.children[0]!.children[0]!.plugin).toBe('static');
  });

  it('totals the time per command over top-level calls only, per sandbox and for the pod', async () => {
    const s = await story();
    expect(s.sandboxes[0]!.totals).toEqual({ VERSION: 1, ADD: 40.5, CHECK: 7, DEL: 20 });
    expect(s.sandboxes[1]!.totals).toEqual({ ADD: 50 });
    expect(s.totals).toEqual({ VERSION: 1, ADD: 123.5, CHECK: 7, DEL: 20 });
  });

  it('narrows to one pod UID when the name was reused', async () => {
    const s = await story('?podUid=uid-web-0-new');
    expect(s.pod).toEqual({ namespace: 'demo', name: 'web-0', uid: 'uid-web-0-new', uids: ['uid-web-0-new'] });
    expect(s.calls.map((c) => c.id)).toEqual([reusedName.id]);
  });

  it('narrows to a time window: calls started in it, with what they delegated', async () => {
    const ms = (us: number) => String(T0_MS + us / 1000);
    const s = await story(`?since=${ms(2 * S)}&until=${ms(4 * S)}`);
    expect(s.calls.map((c) => c.id)).toEqual([check.id, del.id]);
    expect(s.calls[1]!.children.map((c) => c.id)).toEqual([delIpam.id]);
    expect(s.totals).toEqual({ CHECK: 7, DEL: 20 });
    expect((await story(`?since=${ms(4 * S)}&podUid=uid-web-0-new`)).calls.map((c) => c.id)).toEqual([reusedName.id]);
  });

  it('refuses an empty or unreadable window, naming the field', async () => {
    for (const [query, field] of [
      [`?since=${T0_MS + 5}&until=${T0_MS}`, 'until'],
      ['?since=yesterday', 'since'],
    ] as const) {
      const res = await getJson<ErrorBody>(h.app, `/api/v1/pods/demo/web-0${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body), query).toContain(field);
    }
    const empty = await getJson<ErrorBody>(h.app, `/api/v1/pods/demo/web-0?until=${T0_MS}`);
    expect(empty.status).toBe(404);
    expect(empty.body.error.message).toContain('since and until');
  });

  it("does not mix in another pod's calls", async () => {
    const res = await getJson<PodStory>(h.app, '/api/v1/pods/demo/api-0');
    expect(res.body.calls.map((c) => c.id)).toEqual([otherPod.id]);
  });

  it('answers 404 in the error shape for a pod with no calls', async () => {
    for (const url of ['/api/v1/pods/demo/nobody', '/api/v1/pods/elsewhere/web-0', '/api/v1/pods/demo/web-0?podUid=uid-unknown']) {
      const res = await getJson<ErrorBody>(h.app, url);
      expect(res.status, url).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/') } });
    }
  });

  it('decodes escaped path segments', async () => {
    const odd = makeCall({ namespace: 'team a', podName: 'web/0' });
    h.write(odd);
    const res = await getJson<PodStory>(h.app, `/api/v1/pods/${encodeURIComponent('team a')}/${encodeURIComponent('web/0')}`);
    expect(res.status).toBe(200);
    expect(res.body.calls.map((c) => c.id)).toEqual([odd.id]);
  });

  it("shows each sandbox's open findings: a DEL looping on it", async () => {
    const failingDel = (at: number) => makeCall({ at, podName: 'stuck-0', containerId: 'sandbox-stuck', command: 'DEL', exit: 1 });
    h.write(makeCall({ at: 0, podName: 'stuck-0', containerId: 'sandbox-stuck' }), failingDel(10 * S), failingDel(20 * S), failingDel(30 * S));
    createCallLoopDetector(h.db).detect(T0_MS + 60_000);
    const res = await getJson<PodStory>(h.app, '/api/v1/pods/demo/stuck-0');
    expect(res.body.sandboxes).toHaveLength(1);
    expect(res.body.sandboxes[0]!.findings).toEqual([expect.objectContaining({ kind: 'del-loop', containerId: 'sandbox-stuck', resolvedAt: null })]);
    expect(podStorySchema.safeParse(res.body).success).toBe(true);
    // Other pods: none.
    expect((await story()).sandboxes.every((sb) => sb.findings.length === 0)).toBe(true);
  });
});
