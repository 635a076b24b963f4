/**
 * The runtime's side from the store to the contract: snapshots (as the
 * poller publishes them) into the tracker on a real SQLite store, read back
 * through GET /api/v1/node/runtime, the findings, a pod's story, the gc plan
 * and /metrics; the leaked-ip guess giving way where the runtime judges.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { createTailHub } from '../../api/tail/tail-hub.js';
import { leakTimingFor, type RuntimeSnapshot } from '../../collector/index.js';
import { createCacheStore } from '../../store/cache/cache-store.js';
import { createRuntimeTracker, type RuntimeTracker } from '../../store/runtime/index.js';
import type { Database } from '../../store/index.js';
import { cacheEntry, getJson, makeCall, startApi, T0_MS, type ApiHarness } from './api-harness.js';
import { CONDITIONS_NOT_READY, runtimeSandbox, runtimeSnapshot } from './runtime-fixtures.js';

const TIMING = leakTimingFor(1000);
const NOT_READY = CONDITIONS_NOT_READY;
const sandbox = runtimeSandbox;
const snap = runtimeSnapshot;

let h: ApiHarness | null = null;
let tracker: RuntimeTracker;
const errors: unknown[] = [];
const start = async () => {
  h = await startApi({
    cache: true,
    runtime: (db: Database) => {
      // The tracker answers all the API reads of the runtime.
      tracker = createRuntimeTracker(db, { timing: TIMING, onError: (e) => errors.push(e) });
      return tracker;
    },
  });
  return h;
};

afterEach(async () => {
  await h?.close();
  h = null;
  expect(errors.splice(0)).toEqual([]);
});

describe('GET /api/v1/node/runtime', () => {
  it('says whether the runtime answers and its conditions since when, with a transition per change and none per poll', async () => {
    const { app } = await start();
    tracker.onRuntimeSnapshot(snap(T0_MS, { conditions: NOT_READY }));
    for (let i = 1; i <= 20; i++) tracker.onRuntimeSnapshot(snap(T0_MS + i * 1000, { conditions: NOT_READY }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 30_000));
    const { status, body } = await getJson<Record<string, unknown> & { transitions: { type: string; status: boolean }[] }>(app, '/api/v1/node/runtime');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      endpoint: '/run/containerd/containerd.sock',
      reachable: true,
      name: 'containerd',
      version: '1.6.20',
      apiVersion: 'v1',
      conditions: [
        { type: 'RuntimeReady', status: true, since: new Date(T0_MS).toISOString() },
        { type: 'NetworkReady', status: true, reason: '', message: '', since: new Date(T0_MS + 30_000).toISOString() },
      ],
      lastCheckedAt: new Date(T0_MS + 30_000).toISOString(),
      error: null,
      errorKind: null,
    });
    expect(body.transitions.map((t) => `${t.type}=${t.status}`)).toEqual(['NetworkReady=true', 'NetworkReady=false', 'RuntimeReady=true', 'Reachable=true']);
  });

  it('opens network-not-ready with the runtime’s reason and message and the conf change before it, and resolves it when ready', async () => {
    const { app, db } = await start();
    db.prepare(
      "INSERT INTO conf_versions (path, dir, kind, size_bytes, file_mtime_ms, valid_from_ms, first_seen_ms, removed_at_ms, types_json) VALUES ('/etc/cni/net.d/10-net.conflist', '/etc/cni/net.d', 'file', 10, ?, ?, ?, ?, '[]')",
    ).run(T0_MS - 600_000, T0_MS - 600_000, T0_MS - 600_000, T0_MS - 3000);
    tracker.onRuntimeSnapshot(snap(T0_MS, { conditions: NOT_READY }));
    const open = await getJson<{ items: { kind: string; severity: string; subject: string; message: string; path: string | null }[] }>(app, '/api/v1/findings?kind=network-not-ready');
    expect(open.body.items).toEqual([expect.objectContaining({ severity: 'critical', subject: 'runtime NetworkReady', path: '/etc/cni/net.d/10-net.conflist' })]);
    const message = open.body.items[0]!.message;
    expect(message).toContain('containerd 1.6.20 at /run/containerd/containerd.sock reports NetworkReady=false');
    expect(message).toContain('NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized');
    expect(message).toContain('It came 3 s after /etc/cni/net.d/10-net.conflist was removed');
    // Unreachable meanwhile: nothing is known, so the finding stays.
    tracker.onRuntimeSnapshot(snap(T0_MS + 1000, { reachable: false, conditions: null, sandboxes: null, listedAtMs: null, answeringSinceMs: null, problem: { kind: 'refused', message: 'it refuses' } }));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=network-not-ready')).body.items).toHaveLength(1);
    tracker.onRuntimeSnapshot(snap(T0_MS + 2000));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=network-not-ready')).body.items).toEqual([]);
  });

  it('says why a runtime cannot be asked, keeping the conditions it last reported', async () => {
    const { app } = await start();
    tracker.onRuntimeSnapshot(snap(T0_MS));
    tracker.onRuntimeSnapshot(snap(T0_MS + 1000, { reachable: false, version: null, conditions: null, sandboxes: null, listedAtMs: null, answeringSinceMs: null, problem: { kind: 'timeout', message: 'The runtime at /s did not answer Version within 5 s: it hangs.' } }));
    const { body } = await getJson<Record<string, unknown>>(app, '/api/v1/node/runtime');
    expect(body).toMatchObject({ reachable: false, error: 'The runtime at /s did not answer Version within 5 s: it hangs.', errorKind: 'timeout', conditions: [{ type: 'RuntimeReady' }, { type: 'NetworkReady' }] });
  });

  it('reports the runtime on /healthz: absent or down is the node’s state and leaves the daemon ok; a socket it may not open makes it degraded', async () => {
    const { app } = await start();
    const health = async () => (await getJson<{ status: string; problems: string[]; runtime: Record<string, unknown> | null }>(app, '/healthz')).body;
    expect((await health()).runtime).toEqual({ endpoint: null, reachable: false, errorKind: null, error: null, lastCheckedAt: null, lastCheckedAgeMs: null, answeringSince: null });
    tracker.onRuntimeSnapshot(snap(T0_MS));
    expect(await health()).toMatchObject({
      status: 'ok',
      runtime: { endpoint: '/run/containerd/containerd.sock', reachable: true, errorKind: null, lastCheckedAt: new Date(T0_MS).toISOString(), answeringSince: new Date(T0_MS).toISOString() },
    });
    const down = (kind: 'refused' | 'denied', message: string): Partial<RuntimeSnapshot> => ({ reachable: false, version: null, conditions: null, sandboxes: null, listedAtMs: null, answeringSinceMs: null, problem: { kind, message } });
    tracker.onRuntimeSnapshot(snap(T0_MS + 1000, down('refused', '/run/containerd/containerd.sock refuses connections: the runtime that made the socket is not running (or is restarting).')));
    expect(await health()).toMatchObject({ status: 'ok', problems: [], runtime: { reachable: false, errorKind: 'refused', error: expect.stringContaining('refuses connections') } });
    tracker.onRuntimeSnapshot(snap(T0_MS + 2000, down('denied', 'Cannot open /run/containerd/containerd.sock (EACCES): asking the runtime needs root.')));
    const denied = await health();
    expect(denied).toMatchObject({ status: 'degraded', runtime: { errorKind: 'denied' } });
    expect(denied.problems).toEqual([
      "The container runtime cannot be asked: Cannot open /run/containerd/containerd.sock (EACCES): asking the runtime needs root. The runtime's readiness and leaked attachments are not followed until this is fixed; calls are still recorded.",
    ]);
  });

  it('answers 501 when the daemon does not ask the runtime', async () => {
    h = await startApi();
    expect((await getJson(h.app, '/api/v1/node/runtime')).status).toBe(501);
    expect((await getJson(h.app, '/healthz')).body).toMatchObject({ status: 'ok', runtime: null });
    expect((await getJson(h.app, '/api/v1/node/cni/gc-plan')).status).toBe(501);
  });
});

describe('sandboxes beside their calls', () => {
  it('gives each sandbox of a pod’s story the runtime’s state, and keeps the last known after it goes', async () => {
    const { app, write } = await start();
    write(makeCall({ containerId: 'c1', namespace: 'demo', podName: 'web' }));
    write(makeCall({ containerId: 'c2', namespace: 'demo', podName: 'web', at: 5_000_000 }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 10_000, { sandboxes: [sandbox('c1', { name: 'web', labels: { tier: 'front' } })] }));
    type Story = { sandboxes: { containerId: string; runtime: Record<string, unknown> | null }[] };
    let story = (await getJson<Story>(app, '/api/v1/pods/demo/web')).body;
    expect(story.sandboxes.find((s) => s.containerId === 'c1')!.runtime).toEqual({
      state: 'ready',
      createdAt: new Date(T0_MS).toISOString(),
      ip: '10.22.0.5',
      additionalIps: [],
      uid: 'uid-c1',
      attempt: 0,
      runtimeHandler: '',
      labels: { tier: 'front' },
      annotations: {},
      seenAt: new Date(T0_MS + 10_000).toISOString(),
      goneAt: null,
    });
    expect(story.sandboxes.find((s) => s.containerId === 'c2')!.runtime).toBeNull();
    tracker.onRuntimeSnapshot(snap(T0_MS + 11_000, { sandboxes: [sandbox('c1', { name: 'web', labels: { tier: 'front' }, state: 'notready' })] }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 12_000, { sandboxes: [] }));
    story = (await getJson<Story>(app, '/api/v1/pods/demo/web')).body;
    expect(story.sandboxes.find((s) => s.containerId === 'c1')!.runtime).toMatchObject({ state: 'notready', seenAt: new Date(T0_MS + 11_000).toISOString(), goneAt: new Date(T0_MS + 12_000).toISOString() });
  });

  it('does not take a sandbox for gone while the runtime has only just started', async () => {
    const { app, write } = await start();
    write(makeCall({ containerId: 'c1', namespace: 'demo', podName: 'web' }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 10_000, { sandboxes: [sandbox('c1', { name: 'web' })] }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 11_000, { sandboxes: [], answeringSinceMs: T0_MS + 10_500 }));
    const story = (await getJson<{ sandboxes: { runtime: { goneAt: string | null } | null }[] }>(app, '/api/v1/pods/demo/web')).body;
    expect(story.sandboxes[0]!.runtime?.goneAt).toBeNull();
  });
});

describe('leaks the runtime confirms', () => {
  const T = T0_MS + 120_000;

  it('confirms an attachment whose sandbox two lists missed, names it, plans its GC and counts it per network; the live one is never leaked', async () => {
    const { app, cache } = await start();
    cache!.writeCacheEvents([
      { type: 'cache.added', entry: cacheEntry('live'), atMs: T0_MS },
      { type: 'cache.added', entry: cacheEntry('gone', { ips: ['10.22.0.9'], path: '/var/lib/cni/results/podnet-gone-eth0' }), atMs: T0_MS },
      { type: 'ip.allocated', allocation: { path: '/var/lib/cni/networks/podnet/10.22.0.9', dir: '/var/lib/cni/networks', network: 'podnet', ip: '10.22.0.9', containerId: 'gone', ifName: 'eth0', mtimeMs: T0_MS }, atMs: T0_MS },
    ]);
    const listed = [sandbox('live')];
    tracker.onRuntimeSnapshot(snap(T, { sandboxes: listed }));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items).toEqual([]);
    expect(tracker.view().leaks).toMatchObject({ judging: true, confirmed: 0, suspected: 1 });
    tracker.onRuntimeSnapshot(snap(T + 2000, { sandboxes: listed }));
    const found = (await getJson<{ items: Record<string, unknown>[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items;
    expect(found).toEqual([expect.objectContaining({ severity: 'warning', subject: 'gone/podnet/eth0', containerId: 'gone', network: 'podnet', ip: '10.22.0.9', pod: { namespace: 'demo', name: 'pod-gone' } })]);
    expect(found[0]!.message).toMatch(/still holds 10\.22\.0\.9 in libcni's cache entry .* and host-local's \/var\/lib\/cni\/networks\/podnet\/10\.22\.0\.9, but containerd 1\.6\.20 at .* has not listed its sandbox since/);
    const plan = (await getJson<{ judging: boolean; items: Record<string, unknown>[] }>(app, '/api/v1/node/cni/gc-plan')).body;
    expect(plan).toMatchObject({ judging: true, suspected: 0 });
    expect(plan.items).toEqual([
      expect.objectContaining({
        containerId: 'gone',
        network: 'podnet',
        ifName: 'eth0',
        addresses: ['10.22.0.9'],
        cachePath: '/var/lib/cni/results/podnet-gone-eth0',
        reservationPaths: ['/var/lib/cni/networks/podnet/10.22.0.9'],
        missingSince: new Date(T).toISOString(),
        freeable: true,
        why: null,
      }),
    ]);
    const metrics = (await h!.app.inject('/metrics')).body;
    expect(metrics).toMatch(/^cnirec_leaked_attachments\{network="podnet"\} 1$/m);
    expect(metrics).toMatch(/^cnirec_runtime_reachable 1$/m);
    expect(metrics).toMatch(/^cnirec_runtime_condition\{type="NetworkReady"\} 1$/m);

    // Resolved once the cache entry and the reservation are gone (a gc --apply, or the DEL ran after all).
    cache!.writeCacheEvents([
      { type: 'cache.removed', path: '/var/lib/cni/results/podnet-gone-eth0', dir: '/var/lib/cni/results', atMs: T + 3000 },
      { type: 'ip.released', path: '/var/lib/cni/networks/podnet/10.22.0.9', dir: '/var/lib/cni/networks', atMs: T + 3000 },
    ]);
    tracker.onRuntimeSnapshot(snap(T + 4000, { sandboxes: listed }));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items).toEqual([]);
    expect((await h!.app.inject('/metrics')).body).not.toMatch(/^cnirec_leaked_attachments\{/m);
  });

  it('never judges during the runtime’s own start, nor attachments whose args name no pod', async () => {
    const { app, cache } = await start();
    cache!.writeCacheEvents([
      { type: 'cache.added', entry: cacheEntry('gone'), atMs: T0_MS },
      { type: 'cache.added', entry: cacheEntry('podman', { cniArgs: [], pod: null, path: '/var/lib/cni/results/podnet-podman-eth0' }), atMs: T0_MS },
    ]);
    // Its start grace is 3 s: the first list that counts is at T + 3 s, the second that confirms at T + 5 s.
    for (let i = 0; i < 5; i++) tracker.onRuntimeSnapshot(snap(T + i * 1000, { answeringSinceMs: T }));
    expect(tracker.view().leaks).toMatchObject({ judging: true, confirmed: 0, suspected: 1 });
    tracker.onRuntimeSnapshot(snap(T + 5000, { answeringSinceMs: T }));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items).toHaveLength(1);
    expect((await getJson<{ items: { containerId: string }[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items[0]!.containerId).toBe('gone');
    expect(tracker.gcPlan().items.map((i) => i.containerId)).toEqual(['gone']);
  });

  it('resolves a leak the runtime lists after all, and a metric shows the runtime gone', async () => {
    const { app, cache } = await start();
    cache!.writeCacheEvents([{ type: 'cache.added', entry: cacheEntry('back'), atMs: T0_MS }]);
    tracker.onRuntimeSnapshot(snap(T));
    tracker.onRuntimeSnapshot(snap(T + 2000));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items).toHaveLength(1);
    tracker.onRuntimeSnapshot(snap(T + 3000, { sandboxes: [sandbox('back')] }));
    expect((await getJson<{ items: unknown[] }>(app, '/api/v1/findings?kind=leaked-attachment')).body.items).toEqual([]);
    tracker.onRuntimeSnapshot(snap(T + 4000, { reachable: false, conditions: null, sandboxes: null, listedAtMs: null, answeringSinceMs: null, problem: { kind: 'absent', message: 'no socket' } }));
    const metrics = (await h!.app.inject('/metrics')).body;
    expect(metrics).toMatch(/^cnirec_runtime_reachable 0$/m);
    expect(metrics).not.toMatch(/^cnirec_runtime_condition\{/m);
  });

  it('exports no reachable metric where there is nothing to alert on: off, not asked yet, no runtime ever found; 0 for a configured socket that does not answer', async () => {
    const { app } = await start();
    const reachable = async () => /^cnirec_runtime_reachable (\d)$/m.exec((await app.inject('/metrics')).body)?.[1] ?? null;
    const down = (kind: 'off' | 'absent', endpoint: string | null): Partial<RuntimeSnapshot> => ({
      endpoint,
      reachable: false,
      version: null,
      conditions: null,
      sandboxes: null,
      listedAtMs: null,
      answeringSinceMs: null,
      problem: { kind, message: kind },
    });
    // Before the first poll (it comes once the tracer records).
    expect(await reachable()).toBeNull();
    tracker.onRuntimeSnapshot(snap(T0_MS, down('off', null)));
    expect(await reachable()).toBeNull();
    // The usual sockets, none there: a node without a CRI runtime (podman only).
    tracker.onRuntimeSnapshot(snap(T0_MS + 1000, down('absent', null)));
    expect(await reachable()).toBeNull();
    // A socket set with --cri-endpoint that nothing answers on: the operator expects a runtime there.
    tracker.onRuntimeSnapshot(snap(T0_MS + 2000, down('absent', '/run/containerd/containerd.sock')));
    expect(await reachable()).toBe('0');
  });

  it('makes the leaked-ip guess give way where the runtime judges, and keeps it where it cannot', async () => {
    const { db, cache } = await start();
    const judged = new Set<string>();
    const guessing = createCacheStore(db, { sinceMs: T0_MS - 1000, graceMs: 1000, runtimeJudges: (id) => id !== null && judged.has(id) });
    const reservation = (id: string, ip: string) => ({
      type: 'ip.allocated' as const,
      allocation: { path: `/var/lib/cni/networks/podnet/${ip}`, dir: '/var/lib/cni/networks', network: 'podnet', ip, containerId: id, ifName: 'eth0', mtimeMs: T0_MS },
      atMs: T0_MS,
    });
    guessing.writeCacheEvents([reservation('a', '10.22.0.21'), reservation('b', '10.22.0.22'), { type: 'cache.reconciled', atMs: T0_MS, dirs: [], livePaths: [], watchingResults: true }]);
    guessing.refresh(T0_MS + 10_000);
    const open = () => new Set(cache!.findingGroups({ kinds: ['leaked-ip'], limit: 10 }).items.map((f) => f.containerId));
    expect(open()).toEqual(new Set(['a', 'b']));
    judged.add('a');
    guessing.refresh(T0_MS + 11_000);
    expect(open()).toEqual(new Set(['b']));
  });
});

describe('the tail', () => {
  it('sends runtime.readiness to every client when the runtime’s readiness changes', async () => {
    await start();
    const hub = createTailHub();
    const frames: string[] = [];
    hub.add({ filter: {}, deliver: () => undefined, deliverTracer: (f) => frames.push(f.toString()) });
    tracker.subscribe(hub);
    tracker.onRuntimeSnapshot(snap(T0_MS, { conditions: NOT_READY }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 1000, { conditions: NOT_READY }));
    tracker.onRuntimeSnapshot(snap(T0_MS + 2000));
    const messages = frames.map((f) => JSON.parse(f) as { type: string; runtime: { conditions: { type: string; status: boolean }[] } });
    expect(messages.map((m) => m.type)).toEqual(['runtime.readiness', 'runtime.readiness']);
    expect(messages.map((m) => m.runtime.conditions.find((c) => c.type === 'NetworkReady')?.status)).toEqual([false, true]);
  });
});
