// The heartbeat sieve on a real SQLite file: calls named by their network on their way to the writer,
// STATUS trees held until they end and folded or kept, readiness and its transitions stored and read back
// after a restart, the readiness findings opened, filled in and resolved, GC-driven DELs marked, and what
// GET /api/v1/calls, GET /api/v1/node/cni/status, /metrics and the tail make of it.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { createHeartbeatSieve, type HeartbeatSieve } from '../../store/network/index.js';
import { createFindingsReader } from '../../store/findings/findings-reader.js';
import { buildApp } from '../../api/app.js';
import { matchesFilter } from '../../api/tail/tail-filter.js';
import { summaryFromLive } from '../../api/present/call-summary.js';
import { finished, makeCall, started, stream, T0, T0_MS } from './api-harness.js';
import { COLLECTOR_STATS, STORE_STATUS, TRACER_STATUS, tempStore, type TempStore } from './harness.js';

const NOW = T0_MS + 3_600_000;
const STATUS_ERROR = '{"cniVersion":"1.1.0","code":50,"msg":"agent socket missing"}';
const conf = JSON.stringify({ cniVersion: '1.1.0', name: 'podnet', type: 'cilium-cni' });

/** A STATUS call as libcni makes it: no container, netns, interface or args; the network's config on stdin (or nothing, light). */
const status = (atSec: number, over: Parameters<typeof makeCall>[0] = {}): CniCall =>
  makeCall({
    at: atSec * 1_000_000,
    command: 'STATUS',
    plugin: 'cilium-cni',
    containerId: '',
    noPod: true,
    durationMs: 4,
    netns: '',
    ifname: '',
    stdin: stream(conf),
    stdout: stream(),
    ...over,
  });
const failing = (atSec: number, light = false) =>
  status(atSec, { exit: 50, stdin: light ? stream() : stream(conf), stdout: light ? stream() : stream(STATUS_ERROR), captureMode: light ? 'light' : 'full' });

describe('the heartbeat sieve', () => {
  let t: TempStore;
  let sieve: HeartbeatSieve;
  let errors: unknown[];
  let now: number;
  const make = () => createHeartbeatSieve(t.db, { slowMs: 3000, onError: (e) => errors.push(e), now: () => now });
  /** Every event of each call, started then finished, as the collector publishes them; the writer hears what is kept. */
  const feed = (...calls: CniCall[]) => sieve.onEvents(calls.flatMap((c): CollectorEvent[] => [started(c), finished(c)]));
  const list = (filter: Parameters<TempStore['store']['listCalls']>[0] = {}) => t.store.listCalls(filter, 1000).items;
  const findings = () => createFindingsReader(t.db);

  beforeEach(() => {
    t = tempStore('cnirec-network-');
    errors = [];
    now = NOW;
    sieve = make();
    sieve.subscribe({ onEvents: (events) => t.store.writeEvents(events) });
  });
  afterEach(() => {
    expect(errors).toEqual([]);
    t.remove();
  });

  it('stores the first answer, folds healthy heartbeats into counts and latency, and lists none of them by default', () => {
    feed(status(0));
    for (let i = 1; i <= 200; i++) feed(status(i * 5));
    const kept = list({ command: 'STATUS' });
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ network: 'podnet', ok: true });
    expect(list()).toEqual([]);
    const [n] = sieve.networks();
    expect(n).toMatchObject({ network: 'podnet', ready: true, checks: 201, failing: null });
    expect(n!.transitions.map((x) => x.ready)).toEqual([true]);
    expect(n!.latency.maxUs).toBe(4000);
  });

  it('keeps a STATUS tree whole or folds it whole: the delegate waits for its parent', () => {
    const healthy = status(0);
    const ipam = makeCall({ at: 1000, command: 'STATUS', plugin: 'host-local', parentId: healthy.id, parentProcess: null, containerId: '', noPod: true, stdin: stream() });
    // As the collector publishes: parent started, child started, child finished, parent finished.
    sieve.onEvents([started(healthy), started(ipam), finished(ipam), finished(healthy)]);
    expect(list({ command: 'STATUS' }).map((c) => c.plugin).sort()).toEqual(['cilium-cni', 'host-local']);
    // The delegate has no stdin (light): it is named by its parent's network.
    expect(list({ command: 'STATUS', plugin: 'host-local' })[0]?.network).toBe('podnet');
    const again = status(5);
    const ipam2 = makeCall({ at: 5_001_000, command: 'STATUS', plugin: 'host-local', parentId: again.id, parentProcess: null, containerId: '', noPod: true });
    sieve.onEvents([started(again), started(ipam2), finished(ipam2), finished(again)]);
    expect(list({ command: 'STATUS' })).toHaveLength(2);
  });

  it('opens network-not-ready on a failure seen in light mode, fills in its message from the next captured answer, and resolves it on recovery', () => {
    feed(status(0));
    now = NOW + 1000;
    const first = failing(5, true);
    feed(first);
    let [f] = findings().listFindings({ kind: 'network-not-ready' });
    expect(f).toMatchObject({ subject: 'podnet', network: 'podnet', count: 1, callId: first.id, resolvedAtMs: null });
    expect(f!.message).toContain('exit 50; its message comes with the next check captured with payloads');
    expect(sieve.networks()[0]!.transitions[0]).toMatchObject({ ready: false, errorMsg: null, callId: first.id });

    now = NOW + 2000;
    feed(failing(10));
    [f] = findings().listFindings({ kind: 'network-not-ready' });
    expect(f!.message).toContain('error 50 (plugin not available): "agent socket missing"');
    expect(f!.count).toBe(2);
    const n = sieve.networks()[0]!;
    expect(n.failing?.error).toEqual({ code: 50, msg: 'agent socket missing', details: null });
    // The transition made by the light-mode failure now says what it was, in memory and on disk.
    expect(n.transitions[0]).toMatchObject({ ready: false, errorCode: 50, errorMsg: 'agent socket missing', callId: first.id });
    expect(make().networks()[0]!.transitions[0]).toMatchObject({ errorCode: 50, errorMsg: 'agent socket missing' });
    // Failing heartbeats are listed by default.
    expect(list().map((c) => c.ok)).toEqual([false, false]);

    now = NOW + 3000;
    feed(status(15));
    expect(findings().listFindings({ kind: 'network-not-ready' })).toEqual([]);
    expect(findings().listFindings({ kind: 'network-not-ready', includeResolved: true })[0]).toMatchObject({ resolvedAtMs: NOW + 3000 });
    expect(sieve.networks()[0]!.transitions.map((x) => x.ready)).toEqual([true, false, true]);
    // command=STATUS: the first answer, the failures, the first after them.
    expect(list({ command: 'STATUS' }).map((c) => c.ok)).toEqual([true, false, false, true]);
  });

  it('carries a failure’s count of checks over a restart', () => {
    feed(status(0), failing(5), failing(10));
    sieve = make();
    feed(failing(15));
    expect(findings().listFindings({ kind: 'network-not-ready' })[0]).toMatchObject({ count: 3 });
    expect(findings().listFindings({ kind: 'network-not-ready' })[0]!.message).toContain('(3 failing checks)');
  });

  it('carries readiness over a restart: the next healthy heartbeat is no first answer', () => {
    feed(status(0), failing(5), status(10));
    sieve = make();
    sieve.subscribe({ onEvents: (events) => t.store.writeEvents(events) });
    feed(status(15));
    expect(list({ command: 'STATUS' })).toHaveLength(3);
    expect(sieve.networks()[0]).toMatchObject({ ready: true, checks: 4 });
    expect(sieve.networks()[0]!.transitions).toHaveLength(3);
  });

  it('opens status-flapping past 4 changes in 10 minutes and resolves it when the window has passed', () => {
    // The first answer is no change; then four changes are not flapping yet, the fifth is.
    feed(status(0), failing(5), status(10), failing(15), status(20));
    expect(findings().listFindings({ kind: 'status-flapping' })).toEqual([]);
    feed(failing(25));
    const [f] = findings().listFindings({ kind: 'status-flapping' });
    expect(f).toMatchObject({ subject: 'podnet', count: 5 });
    expect(f!.message).toContain('Network "podnet" went between ready and not ready 5 times in 10 minutes');
    sieve.tick(T0_MS + 60_000);
    expect(findings().listFindings({ kind: 'status-flapping' })).toHaveLength(1);
    sieve.tick(T0_MS + 11 * 60_000);
    expect(findings().listFindings({ kind: 'status-flapping' })).toEqual([]);
  });

  it('names calls without stdin by the network whose live conf lists their plugin type', () => {
    t.db
      .prepare(
        "INSERT INTO conf_versions (path, dir, kind, sha256, size_bytes, file_mtime_ms, valid_from_ms, first_seen_ms, network, cni_version, types_json) VALUES (?, '/etc/cni/net.d', 'file', 'x', 1, 0, 0, 0, ?, '1.1.0', ?)",
      )
      .run('/etc/cni/net.d/10-kindnet.conflist', 'kindnet', JSON.stringify(['ptp', 'host-local', 'portmap']));
    const add = makeCall({ at: 0, plugin: 'ptp', stdin: stream(), captureMode: 'light' });
    feed(add, status(5, { plugin: 'portmap', stdin: stream() }), makeCall({ at: 6_000_000, plugin: 'macvlan', stdin: stream() }));
    expect(t.store.getCall(add.id)?.network).toBe('kindnet');
    expect(list({ network: 'kindnet' }).map((c) => c.plugin)).toEqual(['ptp']);
    expect(list({ command: 'STATUS', network: 'kindnet' }).map((c) => c.plugin)).toEqual(['portmap']);
    expect(list({ plugin: 'macvlan' })[0]?.network).toBeNull();
    expect(sieve.networks().map((n) => n.network)).toEqual(['kindnet']);
  });

  it('goes on in memory when the readiness tables refuse writes, and every call still reaches the writer', () => {
    t.db.exec('DROP TABLE cni_readiness');
    const add = makeCall({ at: 0 });
    feed(status(0), add, failing(5));
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toContain('cni_readiness');
    expect(t.store.getCall(add.id)).not.toBeNull();
    expect(sieve.networks()[0]).toMatchObject({ network: 'podnet', ready: false, checks: 2 });
    // Newest first.
    expect(list({ command: 'STATUS' }).map((c) => c.ok)).toEqual([false, true]);
    errors = [];
  });

  it('marks the DELs a GC ran first for attachments missing from its valid ones', () => {
    const delOf = (atSec: number, containerId: string, over: Parameters<typeof makeCall>[0] = {}) =>
      makeCall({ at: atSec * 1_000_000, command: 'DEL', plugin: 'cilium-cni', containerId, noPod: true, stdin: stream(conf), ...over });
    const gone = delOf(1, 'gone-1');
    const kept = delOf(2, 'kept-1');
    const podTeardown = delOf(3, 'gone-2', { parentProcess: { pid: 999, comm: 'kubelet', exe: null } });
    const old = delOf(-120, 'gone-3');
    const gc = makeCall({
      at: 4_000_000,
      command: 'GC',
      plugin: 'cilium-cni',
      containerId: '',
      noPod: true,
      stdin: stream(JSON.stringify({ cniVersion: '1.1.0', name: 'podnet', type: 'cilium-cni', 'cni.dev/valid-attachments': [{ containerID: 'kept-1', ifname: 'eth0' }] })),
    });
    feed(old, gone, kept, podTeardown, gc);
    const marked = list({ command: 'DEL' }).filter((c) => c.gcDriven).map((c) => c.containerId);
    expect(marked).toEqual(['gone-1']);
    expect(t.store.getCall(gc.id)).toMatchObject({ network: 'podnet', gcDriven: false });
  });
});

describe('readiness on the API, /metrics and the tail', () => {
  let t: TempStore;
  beforeEach(() => (t = tempStore('cnirec-network-api-')));
  afterEach(() => t.remove());

  it('GET /api/v1/node/cni/status, cnirec_cni_network_ready and the STATUS histogram', async () => {
    const sieve = createHeartbeatSieve(t.db, { slowMs: 3000, onError: (e) => { throw e; }, now: () => NOW });
    sieve.subscribe({ onEvents: (events) => t.store.writeEvents(events) });
    const app = await buildApp({
      tracerStatus: () => TRACER_STATUS,
      collectorStats: () => COLLECTOR_STATS,
      storeStatus: () => STORE_STATUS,
      store: t.store,
      readiness: { networks: () => sieve.networks(), subscribe: (l) => sieve.subscribeReadiness(l) },
    });
    try {
      const feed = (c: CniCall) => sieve.onEvents([started(c), finished(c)]);
      feed(status(0));
      feed(status(5));
      feed(failing(10));
      const res = await app.inject({ url: '/api/v1/node/cni/status' });
      expect(res.statusCode).toBe(200);
      const [item] = (res.json() as { items: Record<string, unknown>[] }).items;
      expect(item).toMatchObject({
        network: 'podnet',
        ready: false,
        plugin: 'cilium-cni',
        error: { code: 50, msg: 'agent socket missing', details: null },
        checks: 3,
        latency: { p50Ms: 4, p99Ms: 4, maxMs: 4, meanMs: 4 },
        since: new Date(T0_MS + 10_004).toISOString(),
      });
      expect((item!.transitions as { ready: boolean; code: number | null }[]).map((x) => [x.ready, x.code])).toEqual([
        [false, 50],
        [true, null],
      ]);
      const metrics = (await app.inject({ url: '/metrics' })).body;
      expect(metrics).toContain('cnirec_cni_network_ready{network="podnet"} 0');
      expect(metrics).toContain('cnirec_cni_status_duration_seconds_count{network="podnet",ok="true"} 2');
      expect(metrics).toContain('cnirec_cni_status_duration_seconds_count{network="podnet",ok="false"} 1');
      // Not followed: 501, said in words.
      const bare = await buildApp({ tracerStatus: () => TRACER_STATUS, collectorStats: () => COLLECTOR_STATS, storeStatus: () => STORE_STATUS, store: t.store });
      const none = await bare.inject({ url: '/api/v1/node/cni/status' });
      expect(none.statusCode).toBe(501);
      expect(none.json()).toMatchObject({ error: { message: 'This daemon does not follow CNI STATUS.' } });
      await bare.close();
    } finally {
      await app.close();
    }
  });

  it('the tail shows a failing STATUS, and healthy ones only when command=STATUS', () => {
    const ok = summaryFromLive(status(0), null);
    const bad = summaryFromLive(failing(5), 'agent socket missing');
    const running = summaryFromLive({ ...status(0), status: 'running', outcome: null, endedAtUs: null, durationUs: null }, null);
    const incomplete = summaryFromLive({ ...status(0), status: 'incomplete', incompleteReason: 'its exit was never seen', outcome: null }, null);
    expect([ok, bad, running, incomplete].map((c) => matchesFilter(c, {}))).toEqual([false, true, false, true]);
    expect([ok, bad, running, incomplete].map((c) => matchesFilter(c, { command: 'STATUS' }))).toEqual([true, true, true, true]);
    // A live call is named by its stdin.
    expect(ok.network).toBe('podnet');
  });
});

void T0;
