// The call store against a real SQLite file: what goes in comes out byte for
// byte, filters and pagination find exactly the right rows.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CapturedStream, CniCall, CollectorEvent, HelperProcess } from '../../collector/types.js';
import { createCallStore, createStoreListener } from '../../store/calls/call-store.js';
import { StoreError } from '../../store/db/errors.js';
import { openDatabase, type Database } from '../../store/db/open-database.js';
import { MAX_POD_CALLS } from '../../store/calls/pod-calls.js';
import type { CallFilter, CallStore } from '../../store/calls/types.js';

// ---- fixtures ---------------------------------------------------------------

const T0 = 1_763_750_000_000_000; // µs, Nov 2025
let nextPid = 1000;

const stream = (bytes: Buffer | string = Buffer.alloc(0), extra: Partial<CapturedStream> = {}): CapturedStream => {
  const b = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  return { bytes: b, totalBytes: b.length, truncated: false, ...extra };
};

interface CallSpec extends Partial<CniCall> {
  /** Offset from T0 in µs; sets startedAtUs. */
  at?: number;
  ns?: string;
  podName?: string;
  uid?: string;
  exit?: number;
  killedBy?: number;
}

/** A finished call (override status/outcome for others); the id is built like the collector's. */
function makeCall(spec: CallSpec = {}): CniCall {
  const { at, ns, podName, uid, exit, killedBy, ...rest } = spec;
  const pid = rest.pid ?? nextPid++;
  const startedAtUs = rest.startedAtUs ?? T0 + (at ?? 0);
  const command = rest.command === undefined ? 'ADD' : rest.command;
  const pod = ns && podName ? { namespace: ns, name: podName, uid: uid ?? null, infraContainerId: null } : null;
  const cniArgs = pod ? `IgnoreUnknown=1;K8S_POD_NAMESPACE=${pod.namespace};K8S_POD_NAME=${pod.name}` : null;
  const outcome = killedBy !== undefined ? { exitCode: null, signal: killedBy, coreDumped: false } : { exitCode: exit ?? 0, signal: null, coreDumped: false };
  return {
    id: `${Math.floor(startedAtUs).toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(startedAtUs * 1000),
    ppid: 4242,
    parentId: null,
    parentProcess: { pid: 4242, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: '/opt/cni/bin/bridge',
    plugin: 'bridge',
    argv: ['/opt/cni/bin/bridge'],
    env: { CNI_COMMAND: command ?? '', ...(cniArgs ? { CNI_ARGS: cniArgs } : {}) },
    command,
    containerId: 'c0ffee',
    netns: '/var/run/netns/cni-1',
    ifname: 'eth0',
    cniArgs,
    pod,
    traceParent: null,
    isVersionProbe: command === 'VERSION',
    startedAtUs,
    endedAtUs: startedAtUs + (rest.durationUs ?? 1_000),
    durationUs: 1_000,
    outcome,
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    lostRecordsCause: null,
    stdioShared: false,
    uncapturedIo: 0,
    stdin: stream('{"cniVersion":"1.0.0"}'),
    stdout: stream('{}'),
    stderr: stream(),
    helpers: [],
    ...rest,
  };
}

/** The snapshot the collector publishes at exec: nothing read yet, nothing ended. */
function asStarted(call: CniCall): CniCall {
  return { ...call, status: 'running', endedAtUs: null, durationUs: null, outcome: null, stdin: stream(), stdout: stream(), stderr: stream(), helpers: [] };
}

function makeHelper(h: Partial<HelperProcess> = {}): HelperProcess {
  return {
    pid: nextPid++,
    ppid: 1,
    path: '/usr/sbin/iptables',
    argv: ['iptables', '-t', 'nat', '-L'],
    startedAtUs: T0 + 10,
    endedAtUs: T0 + 20,
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    stdout: stream(),
    stderr: stream(),
    ...h,
  };
}

const started = (call: CniCall): CollectorEvent => ({ type: 'call.started', call: asStarted(call) });
const finished = (call: CniCall): CollectorEvent => ({ type: 'call.finished', call });

// ---- setup ------------------------------------------------------------------

let dir: string;
let db: Database;
let store: CallStore;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-store-'));
  db = openDatabase(path.join(dir, 'calls.db'));
  store = createCallStore(db);
});

afterEach(() => {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every page of a listing, following cursors (a cursor that never advances fails instead of looping). */
function listAll(filter: CallFilter, pageSize: number): string[] {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    if (++pages > 10_000) throw new Error('pagination does not end');
    const page = store.listCalls(filter, pageSize, cursor);
    expect(page.items.length).toBeLessThanOrEqual(pageSize);
    ids.push(...page.items.map((c) => c.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return ids;
}

// ---- writing and reading one call ---------------------------------------------

describe('a call written by the collector', () => {
  it('is stored as running when it has started, with no outcome yet', () => {
    const call = makeCall();
    store.writeEvents([started(call)]);
    const got = store.getCall(call.id);
    expect(got).toMatchObject({ id: call.id, status: 'running', ok: null, exitCode: null, endedAtUs: null, durationUs: null });
    expect(store.listCalls({ status: 'running' }, 10).items.map((c) => c.id)).toEqual([call.id]);
  });

  it('round-trips byte for byte from started to finished, non-UTF-8 bytes and a 48 KiB payload included', () => {
    const binary = Buffer.from([0xff, 0x00, 0xfe, 0xc3, 0x28, 0x00, 0x80]);
    const big = randomBytes(48 * 1024);
    // A view into a larger pooled buffer: only the viewed bytes may be stored.
    const pooled = Buffer.from('....{"ips":[]}....').subarray(4, 14);
    const helperOut = Buffer.concat([Buffer.from('Chain PREROUTING\n'), Buffer.from([0xff, 0xfe])]);
    const call = makeCall({
      stdin: stream(big, { totalBytes: big.length + 100, truncated: true }),
      stdout: stream(binary),
      stderr: stream(pooled),
      env: { CNI_COMMAND: 'ADD', CNI_ARGS: 'a=1;b=ü', TRACEPARENT: '00-abc-def-01' },
      argv: ['bridge', 'with space', 'ünïcode'],
      traceParent: '00-abc-def-01',
      helpers: [makeHelper({ stdout: stream(helperOut), stderr: stream(Buffer.from([0x00]), { totalBytes: 9, truncated: true }) })],
      parentProcess: { pid: 4242, comm: 'containerd', exe: null },
    });
    store.writeEvents([started(call)]);
    store.writeEvents([finished(call)]);

    const got = store.getCall(call.id);
    expect(got).not.toBeNull();
    if (!got) return;
    expect(got.stdin.bytes.equals(big)).toBe(true);
    expect(got.stdin).toMatchObject({ totalBytes: big.length + 100, truncated: true });
    expect(got.stdout.bytes.equals(binary)).toBe(true);
    expect(got.stderr.bytes.equals(Buffer.from('{"ips":[]}'))).toBe(true);
    expect(got.helpers).toHaveLength(1);
    expect(got.helpers[0]?.stdout.bytes.equals(helperOut)).toBe(true);
    expect(got.helpers[0]?.stderr).toMatchObject({ totalBytes: 9, truncated: true });
    expect(got.helpers[0]?.stderr.bytes.equals(Buffer.from([0x00]))).toBe(true);
    expect(got).toMatchObject({
      status: 'finished',
      ok: true,
      exitCode: 0,
      signal: null,
      coreDumped: false,
      argv: call.argv,
      env: call.env,
      traceParent: '00-abc-def-01',
      parentPid: 4242,
      parentComm: 'containerd',
      parentExe: null,
      startedAtUs: call.startedAtUs,
      durationUs: 1_000,
    });
  });

  it('keeps the payload sizes, not the payloads, in list summaries', () => {
    const call = makeCall({ stdin: stream(randomBytes(2048), { totalBytes: 5000, truncated: true }) });
    store.writeEvents([finished(call)]);
    const [summary] = store.listCalls({}, 10).items;
    expect(summary?.stdin).toEqual({ storedBytes: 2048, totalBytes: 5000, truncated: true });
    expect(summary && 'bytes' in summary.stdin).toBe(false);
  });

  it('stores whole microseconds when the collector passes a fraction', () => {
    const call = makeCall({ startedAtUs: T0 + 0.75, endedAtUs: T0 + 1000.5, durationUs: 999.75 });
    store.writeEvents([finished(call)]);
    expect(store.getCall(call.id)).toMatchObject({ startedAtUs: T0, endedAtUs: T0 + 1000, durationUs: 1000 });
  });

  it('replaces its helpers instead of duplicating them when finished is written twice', () => {
    const call = makeCall({ helpers: [makeHelper({ argv: ['ip', 'link'] }), makeHelper({ argv: ['tc', 'qdisc'] })] });
    store.writeEvents([finished(call)]);
    store.writeEvents([finished(call)]);
    expect(store.getCall(call.id)?.helpers.map((h) => [h.seq, h.argv[0]])).toEqual([
      [0, 'ip'],
      [1, 'tc'],
    ]);
    const fewer = { ...call, helpers: [makeHelper({ argv: ['jq'] })] };
    store.writeEvents([finished(fewer)]);
    expect(store.getCall(call.id)?.helpers.map((h) => h.argv[0])).toEqual(['jq']);
    expect(db.prepare('SELECT count(*) AS n FROM helpers').get()).toEqual({ n: 1 });
  });

  it('is not rolled back to running by a started event that arrives after its finish', () => {
    const call = makeCall({ exit: 1 });
    store.writeEvents([finished(call)]);
    store.writeEvents([started(call)]);
    expect(store.getCall(call.id)).toMatchObject({ status: 'finished', ok: false, exitCode: 1 });
  });

  it('ends up finished when started and finished come in the same batch, in either order', () => {
    const a = makeCall();
    const b = makeCall();
    store.writeEvents([started(a), finished(a), finished(b), started(b)]);
    expect([store.getCall(a.id)?.status, store.getCall(b.id)?.status]).toEqual(['finished', 'finished']);
    expect(store.countCalls()).toBe(2);
  });

  it('writes nothing of a batch that fails part-way', () => {
    const good = makeCall();
    const bad = makeCall({ status: 'bogus' as CniCall['status'] });
    expect(() => store.writeEvents([finished(good), finished(bad)])).toThrow(StoreError);
    expect(store.countCalls()).toBe(0);
  });

  it('is unknown, not failed, when it was cut off before its exit was seen', () => {
    const call = makeCall({ status: 'incomplete', incompleteReason: 'tracer restarted', outcome: null, endedAtUs: null, durationUs: null });
    store.writeEvents([finished(call)]);
    expect(store.getCall(call.id)).toMatchObject({ status: 'incomplete', incompleteReason: 'tracer restarted', ok: null, coreDumped: null });
    expect(store.listCalls({ failed: true }, 10).items).toEqual([]);
  });

  it('returns null for an id it never stored', () => {
    expect(store.getCall('nope')).toBeNull();
  });
});

// ---- filters -----------------------------------------------------------------

describe('listing calls', () => {
  // Newest first in every expectation below.
  const calls = {
    add: makeCall({ at: 1_000, ns: 'web', podName: 'nginx', uid: 'uid-1', containerId: 'ctr-1', durationUs: 2_000 }),
    del: makeCall({ at: 9_000, ns: 'web', podName: 'nginx', uid: 'uid-1', containerId: 'ctr-1', command: 'DEL', exit: 1, durationUs: 50_000 }),
    ipam: makeCall({ at: 1_100, ns: 'web', podName: 'nginx', uid: 'uid-1', containerId: 'ctr-1', plugin: 'host-local', path: '/opt/cni/bin/host-local' }),
    other: makeCall({ at: 5_000, ns: 'db', podName: 'pg', uid: 'uid-2', containerId: 'ctr-2', killedBy: 9 }),
    version: makeCall({ at: 6_000, command: 'VERSION', containerId: null }),
    running: makeCall({ at: 7_000, ns: 'db', podName: 'pg', uid: 'uid-2', containerId: 'ctr-2', command: 'CHECK' }),
    incomplete: makeCall({ at: 8_000, ns: 'db', podName: 'redis', status: 'incomplete', incompleteReason: 'lost', outcome: null }),
  };
  const withParent = { ...calls.ipam, parentId: calls.add.id, parentProcess: null };

  beforeEach(() => {
    const { add, del, other, version, running, incomplete } = calls;
    store.writeEvents([finished(add), finished(withParent), finished(del), finished(other), finished(version), started(running), finished(incomplete)]);
  });

  const ids = (...names: (keyof typeof calls)[]) => names.map((n) => calls[n].id);

  it.each<[string, CallFilter, (keyof typeof calls)[]]>([
    ['no filter lists everything but VERSION probes', {}, ['del', 'incomplete', 'running', 'other', 'ipam', 'add']],
    ['includeVersion adds the VERSION probes', { includeVersion: true }, ['del', 'incomplete', 'running', 'version', 'other', 'ipam', 'add']],
    ['command VERSION lists probes without includeVersion', { command: 'VERSION' }, ['version']],
    ['namespace', { namespace: 'db' }, ['incomplete', 'running', 'other']],
    ['namespace and pod', { namespace: 'web', pod: 'nginx' }, ['del', 'ipam', 'add']],
    ['pod alone', { pod: 'pg' }, ['running', 'other']],
    ['podUid', { podUid: 'uid-2' }, ['running', 'other']],
    ['containerId', { containerId: 'ctr-1' }, ['del', 'ipam', 'add']],
    ['command', { command: 'DEL' }, ['del']],
    ['plugin', { plugin: 'host-local' }, ['ipam']],
    ['failed: exit codes and signals, not unknown outcomes', { failed: true }, ['del', 'other']],
    ['failed: false lists successes only', { failed: false }, ['ipam', 'add']],
    ['minDurationUs', { minDurationUs: 2_000 }, ['del', 'add']],
    ['sinceUs is inclusive', { sinceUs: T0 + 7_000 }, ['del', 'incomplete', 'running']],
    ['untilUs is exclusive', { untilUs: T0 + 5_000 }, ['ipam', 'add']],
    ['a time window', { sinceUs: T0 + 1_100, untilUs: T0 + 8_000 }, ['running', 'other', 'ipam']],
    ['status running', { status: 'running' }, ['running']],
    ['status incomplete', { status: 'incomplete' }, ['incomplete']],
    ['status finished', { status: 'finished' }, ['del', 'other', 'ipam', 'add']],
    ['parentId', { parentId: calls.add.id }, ['ipam']],
    ['filters combine', { namespace: 'web', failed: true, command: 'DEL' }, ['del']],
    ['a value nothing has', { namespace: "web' OR 1=1 --" }, []],
  ])('filters by %s', (_name, filter, expected) => {
    expect(store.listCalls(filter, 100).items.map((c) => c.id)).toEqual(ids(...expected));
  });

  it('reads a pod’s calls oldest first', () => {
    const graph = store.podCallGraph('web', 'nginx');
    expect(graph.calls.map((c) => c.id)).toEqual(ids('add', 'ipam', 'del'));
    expect(graph.truncated).toBe(false);
    // One pod of the name, by its UID.
    expect(store.podCallGraph('web', 'nginx', { podUid: 'uid-1' }).calls.map((c) => c.id)).toEqual(ids('add', 'ipam', 'del'));
    expect(store.podCallGraph('web', 'nginx', { podUid: 'uid-2' }).calls).toEqual([]);
    expect(store.podCallGraph('db', 'pg', { podUid: 'uid-2' }).calls.map((c) => c.id)).toEqual(ids('other', 'running'));
    // A time window: since inclusive, until exclusive, with or without a UID.
    expect(store.podCallGraph('web', 'nginx', { sinceUs: T0 + 1_100 }).calls.map((c) => c.id)).toEqual(ids('ipam', 'del'));
    expect(store.podCallGraph('web', 'nginx', { untilUs: T0 + 1_100 }).calls.map((c) => c.id)).toEqual(ids('add'));
    expect(store.podCallGraph('web', 'nginx', { podUid: 'uid-1', sinceUs: T0 + 1_000, untilUs: T0 + 9_000 }).calls.map((c) => c.id)).toEqual(ids('add', 'ipam'));
  });

  it('lists the calls a call delegated to', () => {
    expect(store.childrenOf(calls.add.id).map((c) => c.id)).toEqual(ids('ipam'));
    expect(store.childrenOf(calls.del.id)).toEqual([]);
  });

  it('reads a pod’s call graph: its calls, what they delegated to without pod args, and helper sizes without bytes', () => {
    // A delegated call with no CNI_ARGS of its own, two levels down, with a helper.
    const noArgs = (spec: CallSpec) => makeCall({ ...spec, cniArgs: null, pod: null, parentProcess: null });
    const ipam2 = noArgs({ at: 1_200, plugin: 'static', parentId: calls.add.id });
    const deep = noArgs({
      at: 1_300,
      plugin: 'tuning',
      parentId: ipam2.id,
      helpers: [makeHelper({ stdout: stream('0123456789'), stderr: stream('ab', { totalBytes: 50, truncated: true }) })],
    });
    store.writeEvents([finished(ipam2), finished(deep)]);

    const graph = store.podCallGraph('web', 'nginx');
    expect(graph.calls.map((c) => c.id)).toEqual(ids('add', 'ipam', 'del'));
    expect(graph.delegated.map((c) => c.id)).toEqual([ipam2.id, deep.id]);
    expect([...graph.helpers.keys()]).toEqual([deep.id]);
    expect(graph.helpers.get(deep.id)).toEqual([
      expect.objectContaining({ seq: 0, path: '/usr/sbin/iptables', stdout: { storedBytes: 10, totalBytes: 10, truncated: false }, stderr: { storedBytes: 2, totalBytes: 50, truncated: true } }),
    ]);
    // The summaries are the same as the list's, field for field.
    expect(graph.calls[0]).toEqual(store.listCalls({ namespace: 'web', pod: 'nginx' }, 10).items.at(-1));
    expect(store.podCallGraph('web', 'nobody')).toEqual({ calls: [], delegated: [], helpers: new Map(), truncated: false });
  });

  it('reads a pod’s calls through SQLite’s JSON exactly as row by row, awkward text, nulls and running calls included', () => {
    // The pod graph reads its rows as one JSON text (summariesAsJsonSql); the lists read them value by value.
    const odd = 'quote " backslash \\ newline \n tab \t nul-ish \u0001 é 漢 🚀 </script>';
    const weird = [
      makeCall({ at: 30_000, ns: 'odd', podName: 'p', uid: odd, containerId: odd, ifname: odd, netns: null, traceParent: odd, durationUs: 2 ** 40 }),
      asStarted(makeCall({ at: 30_100, ns: 'odd', podName: 'p', command: null, containerId: null })),
      makeCall({ at: 30_200, ns: 'odd', podName: 'p', status: 'incomplete', incompleteReason: odd, outcome: null, parentProcess: { pid: 7, comm: odd, exe: odd } }),
      makeCall({ at: 30_300, ns: 'odd', podName: 'p', killedBy: 9, startedAtUs: 2 ** 52 }),
    ];
    store.writeEvents(weird.map((c) => (c.status === 'running' ? { type: 'call.started', call: c } : finished(c))));
    const viaJson = store.podCallGraph('odd', 'p').calls;
    const rowByRow = store.listCalls({ namespace: 'odd', pod: 'p' }, 10).items.reverse();
    expect(viaJson.map((c) => c.id)).toEqual(weird.map((c) => c.id));
    expect(viaJson).toEqual(rowByRow);
    expect(viaJson[0]!.containerId).toBe(odd);
    expect(viaJson[3]!.startedAtUs).toBe(2 ** 52);
  });

  it('keeps the newest calls of a runaway pod past the cap, and says it left the oldest out', () => {
    const loop = Array.from({ length: MAX_POD_CALLS + 3 }, (_, i) => makeCall({ at: 100_000 + i * 10, ns: 'loop', podName: 'del-loop', command: 'DEL', exit: 1 }));
    store.writeEvents(loop.map(finished));
    const graph = store.podCallGraph('loop', 'del-loop');
    expect(graph.truncated).toBe(true);
    expect(graph.calls).toHaveLength(MAX_POD_CALLS);
    expect(graph.calls[0]!.id).toBe(loop[3]!.id);
    expect(graph.calls.at(-1)!.id).toBe(loop.at(-1)!.id);
  });

  it('stops at a parent cycle instead of looping', () => {
    const a = makeCall({ at: 20_000, ns: 'loop', podName: 'p' });
    const b = makeCall({ at: 20_100, parentId: a.id, cniArgs: null, pod: null });
    store.writeEvents([finished({ ...a, parentId: b.id }), finished(b)]);
    const graph = store.podCallGraph('loop', 'p');
    expect(graph.calls.map((c) => c.id)).toEqual([a.id]);
    expect(graph.delegated.map((c) => c.id)).toEqual([b.id]);
  });

  it('counts every call, VERSION probes included', () => {
    expect(store.countCalls()).toBe(7);
  });

  it('reports a database size in whole pages', () => {
    const size = store.databaseSizeBytes();
    expect(size).toBeGreaterThan(0);
    expect(size % 16_384).toBe(0);
  });
});

// ---- pagination ------------------------------------------------------------------

describe('paginating with cursors', () => {
  it('returns each of 250 calls exactly once, newest first, even with equal start times', () => {
    // Groups of seven share a start time, so the id has to break the ties.
    const all = Array.from({ length: 250 }, (_, i) => makeCall({ at: Math.floor(i / 7) * 10 }));
    store.writeEvents(all.map(finished));
    const expected = [...all].sort((a, b) => b.startedAtUs - a.startedAtUs || (a.id < b.id ? 1 : -1)).map((c) => c.id);
    for (const pageSize of [1, 17, 100, 250, 1000]) {
      const got = listAll({}, pageSize);
      expect(got, `page size ${pageSize}`).toEqual(expected);
    }
  });

  it('neither repeats nor skips rows when newer calls arrive between pages', () => {
    const before = Array.from({ length: 60 }, (_, i) => makeCall({ at: i * 10 }));
    store.writeEvents(before.map(finished));
    const first = store.listCalls({}, 25);
    store.writeEvents(Array.from({ length: 30 }, (_, i) => finished(makeCall({ at: 100_000 + i }))));
    const seen = first.items.map((c) => c.id);
    let cursor = first.nextCursor;
    for (let pages = 0; cursor !== null && pages < 100; pages++) {
      const page = store.listCalls({}, 25, cursor);
      seen.push(...page.items.map((c) => c.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual([...before].reverse().map((c) => c.id));
  });

  it('keeps its filter across pages', () => {
    const all = Array.from({ length: 40 }, (_, i) => makeCall({ at: i, command: i % 2 === 0 ? 'ADD' : 'DEL' }));
    store.writeEvents(all.map(finished));
    expect(listAll({ command: 'DEL' }, 7)).toEqual(all.filter((c) => c.command === 'DEL').reverse().map((c) => c.id));
  });

  it('has no next cursor on the last page, even when it is exactly full', () => {
    store.writeEvents([makeCall({ at: 1 }), makeCall({ at: 2 })].map(finished));
    expect(store.listCalls({}, 2).nextCursor).toBeNull();
  });

  it.each([
    ['garbage', 'not a cursor'],
    ['valid base64url of the wrong shape', Buffer.from('{"a":1}').toString('base64url')],
    ['a non-integer time', Buffer.from('[1.5,"x"]').toString('base64url')],
  ])('rejects %s as a cursor with a StoreError', (_name, cursor) => {
    expect(() => store.listCalls({}, 10, cursor)).toThrow(expect.objectContaining({ name: 'StoreError', code: 'invalid-cursor' }));
  });

  it('clamps page sizes to between 1 and 1000', () => {
    store.writeEvents(Array.from({ length: 3 }, (_, i) => finished(makeCall({ at: i }))));
    expect(store.listCalls({}, 0).items).toHaveLength(1);
    expect(store.listCalls({}, Number.NaN).items).toHaveLength(1);
    expect(store.listCalls({}, 1e9).items).toHaveLength(3);
  });
});

// ---- daemon lifecycle ------------------------------------------------------------

describe('at daemon startup', () => {
  it('marks the calls a previous run left running as incomplete, and only those', () => {
    const done = makeCall({ at: 1 });
    const open1 = makeCall({ at: 2 });
    const open2 = makeCall({ at: 3 });
    store.writeEvents([finished(done), started(open1), started(open2)]);
    expect(store.markRunningAsIncomplete('cnirec stopped while the call ran')).toBe(2);
    expect(store.getCall(open1.id)).toMatchObject({ status: 'incomplete', incompleteReason: 'cnirec stopped while the call ran', ok: null });
    expect(store.getCall(done.id)).toMatchObject({ status: 'finished', incompleteReason: null });
    expect(store.markRunningAsIncomplete('again')).toBe(0);
  });
});

describe('tracer events', () => {
  it('are recorded with their detail and listed newest first', () => {
    store.recordTracerEvent('started', { mode: 'full' }, T0);
    store.recordTracerEvent('lost-events', { count: 12 }, T0 + 5);
    store.recordTracerEvent('stopped', undefined, T0 + 9.5);
    expect(store.listTracerEvents(10).map(({ kind, detail, atUs }) => ({ kind, detail, atUs }))).toEqual([
      { kind: 'stopped', detail: null, atUs: T0 + 9 },
      { kind: 'lost-events', detail: { count: 12 }, atUs: T0 + 5 },
      { kind: 'started', detail: { mode: 'full' }, atUs: T0 },
    ]);
  });
});

describe('a full disk', () => {
  it('fails a write with a disk-full StoreError naming the file, and later writes succeed once there is room', () => {
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const big = makeCall({ stdin: stream(randomBytes(256 * 1024)) });
    let thrown: unknown;
    try {
      store.writeEvents([finished(big)]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StoreError);
    expect(thrown).toMatchObject({ code: 'disk-full', file: db.name });
    expect((thrown as Error).message).toContain(db.name);
    db.pragma('max_page_count = 1000000');
    store.writeEvents([finished(big)]);
    expect(store.getCall(big.id)?.stdin.bytes.length).toBe(256 * 1024);
  });
});

describe('the store listener on a real database', () => {
  it('keeps the collector running through a full disk and stores every call once there is room', () => {
    const errors: StoreError[] = [];
    const listener = createStoreListener(store, (err) => errors.push(err));
    const calls = Array.from({ length: 20 }, (_, i) => makeCall({ at: i, stdin: stream(randomBytes(64 * 1024)) }));
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    expect(() => listener.onEvents(calls.map(started))).not.toThrow();
    expect(() => listener.onEvents(calls.map(finished))).not.toThrow();
    expect(errors.map((e) => e.code)).toEqual(['disk-full']);
    expect(listener.pendingCount).toBe(20);
    db.pragma('max_page_count = 1000000');
    expect(listener.flush()).toBe(true);
    expect(store.countCalls()).toBe(20);
    expect(store.listCalls({ status: 'finished' }, 100).items).toHaveLength(20);
  });
});
