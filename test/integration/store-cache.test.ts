import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CacheEntry, CacheEvent, IpAllocation } from '../../collector/cache/cache-types.js';
import { MAX_CACHE_PAGE } from '../../store/cache/cache-reader.js';
import { createCacheStore, type CacheStore } from '../../store/cache/cache-store.js';
import { createCallStore, openDatabase, type CallStore, type Database } from '../../store/index.js';
import { finished, makeCall, T0_MS } from './api-harness.js';

const RESULTS = '/var/lib/cni/results';
const IPAM = '/var/lib/cni/networks';
const CID = 'sandbox-web-0';
const FILE = `${RESULTS}/podnet-${CID}-eth0`;
const IP_FILE = `${IPAM}/podnet/10.22.0.5`;

const entry = (over: Partial<CacheEntry> = {}): CacheEntry => ({
  path: FILE,
  dir: RESULTS,
  format: 'cniCacheV1',
  containerId: CID,
  networkName: 'podnet',
  ifName: 'eth0',
  netns: null,
  cniArgs: [
    ['K8S_POD_NAMESPACE', 'demo'],
    ['K8S_POD_NAME', 'web-0'],
  ],
  capabilityArgs: null,
  config: { name: 'podnet' },
  configProblem: null,
  result: { ips: [{ address: '10.22.0.5/16' }] },
  ips: ['10.22.0.5'],
  pod: { namespace: 'demo', name: 'web-0', uid: null, infraContainerId: null },
  digest: 'd1',
  mtimeMs: T0_MS + 50,
  ...over,
});
const alloc = (over: Partial<IpAllocation> = {}): IpAllocation => ({ path: IP_FILE, dir: IPAM, network: 'podnet', ip: '10.22.0.5', containerId: CID, ifName: 'eth0', mtimeMs: T0_MS + 20, ...over });
const reconciled = (atMs: number, livePaths: string[]): CacheEvent => ({ type: 'cache.reconciled', atMs, dirs: [RESULTS, IPAM], livePaths, watchingResults: true });

describe('cache store', () => {
  let dir: string;
  let db: Database;
  let calls: CallStore;
  let cache: CacheStore;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-cache-store-'));
    db = openDatabase(path.join(dir, 'c.db'));
    calls = createCallStore(db);
    cache = createCacheStore(db, { sinceMs: T0_MS - 1000, graceMs: 1000 });
  });
  afterEach(() => {
    calls.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps each version, links the ADD that wrote it and the DEL that removed it, and the IP history', () => {
    const add = makeCall({ at: 0 });
    const del = makeCall({ at: 10_000_000, command: 'DEL' });
    cache.writeCacheEvents([reconciled(T0_MS - 500, []), { type: 'ip.allocated', allocation: alloc(), atMs: T0_MS + 25 }, { type: 'cache.added', entry: entry(), atMs: T0_MS + 60 }]);
    // The ADD reaches the store after the file (the collector's grace period): the refresh links it later.
    calls.writeEvents([finished(add)]);
    cache.refresh(T0_MS + 3500); // after the settle time: the whole chain is stored by then
    let [live] = cache.listCacheEntries({});
    expect(live).toMatchObject({ containerId: CID, networkName: 'podnet', podNamespace: 'demo', podName: 'web-0', addCallId: add.id, removedAtMs: null, ips: ['10.22.0.5'] });

    cache.writeCacheEvents([{ type: 'cache.changed', entry: entry({ digest: 'd2', mtimeMs: T0_MS + 5000 }), atMs: T0_MS + 5000 }]);
    expect(cache.listCacheEntries({ includeRemoved: true })).toHaveLength(2);
    expect(cache.listCacheEntries({})).toHaveLength(1);

    calls.writeEvents([finished(del)]);
    cache.writeCacheEvents([
      { type: 'cache.removed', path: FILE, dir: RESULTS, atMs: T0_MS + 10_100 },
      { type: 'ip.released', path: IP_FILE, dir: IPAM, atMs: T0_MS + 10_050 },
    ]);
    cache.refresh(T0_MS + 14_000); // after the removal's settle time
    expect(cache.listCacheEntries({})).toEqual([]);
    [live] = cache.listCacheEntries({ includeRemoved: true });
    expect(live).toMatchObject({ removedAtMs: T0_MS + 10_100, delCallId: del.id });

    const history = cache.ipHistory('10.22.0.5');
    expect(history.map((h) => [h.source, h.containerId, h.podName, h.fromMs, h.toMs])).toEqual([
      // host-local does not know the pod: it is filled in from the cache entry of the same container.
      ['host-local', CID, 'web-0', T0_MS + 20, T0_MS + 10_050],
      ['cache', CID, 'web-0', T0_MS + 60, T0_MS + 5000],
      ['cache', CID, 'web-0', T0_MS + 5000, T0_MS + 10_100],
    ]);
    expect(cache.listFindings({ includeResolved: true })).toEqual([]);
  });

  it('links the chain\'s last ADD even when the file\'s coarse mtime is nearer the end of the plugin before it', () => {
    // Timings as seen with podman's default network (bridge → portmap → firewall → tuning): tuning is quick, and the
    // kernel stamped the file from its coarse clock, before tuning had even started.
    const chain = [
      makeCall({ at: 0, durationMs: 28 }),
      makeCall({ at: 29_000, plugin: 'portmap', durationMs: 3 }),
      makeCall({ at: 34_000, plugin: 'firewall', durationMs: 21 }),
      makeCall({ at: 56_000, plugin: 'tuning', durationMs: 3 }),
    ];
    calls.writeEvents(chain.map(finished));
    cache.writeCacheEvents([reconciled(T0_MS - 500, []), { type: 'cache.added', entry: entry({ mtimeMs: T0_MS + 55 }), atMs: T0_MS + 80 }]);
    cache.refresh(T0_MS + 3500);
    expect(cache.listCacheEntries({})[0]?.addCallId).toBe(chain[3]!.id);
  });

  it('moves a young link to the chain\'s last ADD when that call reaches the store late, and keeps it once settled', () => {
    // bridge → portmap → tuning, the cache file written right after tuning.
    const bridge = makeCall({ at: 0, durationMs: 40 });
    const portmap = makeCall({ at: 60_000, plugin: 'portmap', durationMs: 10 });
    const tuning = makeCall({ at: 100_000, plugin: 'tuning', durationMs: 20 });
    cache.writeCacheEvents([reconciled(T0_MS - 500, []), { type: 'cache.added', entry: entry({ mtimeMs: T0_MS + 200 }), atMs: T0_MS + 210 }]);
    // A loaded node: when the file has settled, only the first two calls are stored.
    calls.writeEvents([finished(bridge), finished(portmap)]);
    cache.refresh(T0_MS + 3500);
    expect(cache.listCacheEntries({})[0]?.addCallId).toBe(portmap.id);
    calls.writeEvents([finished(tuning)]);
    cache.refresh(T0_MS + 5000);
    expect(cache.listCacheEntries({})[0]?.addCallId).toBe(tuning.id);
    // Half a minute on, the link is final: a call that shows up now (nearer in time, say) changes nothing.
    calls.writeEvents([finished(makeCall({ at: 150_000, plugin: 'bandwidth', durationMs: 10 }))]);
    cache.refresh(T0_MS + 40_000);
    expect(cache.listCacheEntries({})[0]?.addCallId).toBe(tuning.id);
  });

  it('reconciles a restart without duplicates and closes what vanished meanwhile', () => {
    const first: CacheEvent[] = [{ type: 'cache.added', entry: entry(), atMs: T0_MS }, { type: 'ip.allocated', allocation: alloc(), atMs: T0_MS }, reconciled(T0_MS, [FILE, IP_FILE])];
    cache.writeCacheEvents(first);
    const again = createCacheStore(db, { sinceMs: T0_MS + 1000 });
    again.writeCacheEvents([{ type: 'cache.added', entry: entry(), atMs: T0_MS + 2000 }, { type: 'ip.allocated', allocation: alloc(), atMs: T0_MS + 2000 }, reconciled(T0_MS + 2000, [FILE, IP_FILE])]);
    expect(again.listCacheEntries({ includeRemoved: true })).toHaveLength(1);
    expect(again.listCacheEntries({})[0]?.lastSeenMs).toBe(T0_MS + 2000);
    expect(again.ipHistory('10.22.0.5')).toHaveLength(2);

    const third = createCacheStore(db, { sinceMs: T0_MS + 3000 });
    third.writeCacheEvents([reconciled(T0_MS + 4000, [])]);
    expect(third.listCacheEntries({})).toEqual([]);
    expect(third.listCacheEntries({ includeRemoved: true })[0]?.removedAtMs).toBe(T0_MS + 4000);
    expect(third.ipHistory('10.22.0.5').every((h) => h.toMs === T0_MS + 4000)).toBe(true);
  });

  it('reports corrupt files, stale entries, leaked IPs and ADDs without a cache file, and resolves them', () => {
    const broken = `${RESULTS}/other-net-x-eth0`;
    cache.writeCacheEvents([
      reconciled(T0_MS - 100, []),
      { type: 'cache.problem', problem: { kind: 'corrupt-json', path: broken, dir: RESULTS, message: 'not valid JSON (Unexpected end of JSON input)' }, atMs: T0_MS },
      { type: 'cache.added', entry: entry(), atMs: T0_MS + 60 },
      { type: 'ip.allocated', allocation: alloc({ path: `${IPAM}/podnet/10.22.0.9`, ip: '10.22.0.9', containerId: 'gone-container' }), atMs: T0_MS },
    ]);
    const lonelyAdd = makeCall({ at: 1_000_000, containerId: 'no-cache', podName: 'lonely' });
    const del = makeCall({ at: 2_000_000, command: 'DEL' });
    calls.writeEvents([finished(makeCall({ at: 0 })), finished(lonelyAdd), finished(del)]);
    cache.refresh(T0_MS + 10_000);
    const open = cache.listFindings({});
    expect(open.map((f) => f.kind).sort()).toEqual(['add-without-cache', 'corrupt-json', 'leaked-ip', 'stale-cache-entry']);
    expect(open.find((f) => f.kind === 'add-without-cache')?.callId).toBe(lonelyAdd.id);
    expect(open.find((f) => f.kind === 'stale-cache-entry')?.callId).toBe(del.id);
    expect(open.find((f) => f.kind === 'leaked-ip')).toMatchObject({ ip: '10.22.0.9', containerId: 'gone-container' });

    cache.writeCacheEvents([
      { type: 'cache.problem-cleared', path: broken, atMs: T0_MS + 11_000 },
      { type: 'cache.removed', path: FILE, dir: RESULTS, atMs: T0_MS + 11_000 },
      { type: 'ip.released', path: `${IPAM}/podnet/10.22.0.9`, dir: IPAM, atMs: T0_MS + 11_000 },
    ]);
    cache.refresh(T0_MS + 12_000);
    expect(cache.listFindings({}).map((f) => f.kind)).toEqual(['add-without-cache']);
    expect(cache.listFindings({ includeResolved: true })).toHaveLength(4);
  });

  it('writes a startup-sized batch exactly as it writes the same events one at a time', () => {
    // A batch of 64+ events preloads the live rows instead of looking each one up: same rows either way.
    const filler = Array.from({ length: 80 }, (_, i): CacheEvent[] => {
      const cid = `filler-${i}`;
      const file = `${RESULTS}/podnet-${cid}-eth0`;
      const ipFile = `${IPAM}/podnet/10.22.1.${i}`;
      return [
        { type: 'cache.added', entry: entry({ path: file, containerId: cid, digest: `f${i}`, ips: [`10.22.1.${i}`] }), atMs: T0_MS + i },
        { type: 'ip.allocated', allocation: alloc({ path: ipFile, ip: `10.22.1.${i}`, containerId: cid }), atMs: T0_MS + i },
      ];
    }).flat();
    const broken = `${RESULTS}/broken-x-eth0`;
    const story: CacheEvent[] = [
      ...filler,
      { type: 'cache.problem', problem: { kind: 'empty-file', path: broken, dir: RESULTS, message: 'empty' }, atMs: T0_MS + 100 },
      { type: 'cache.added', entry: entry(), atMs: T0_MS + 101 },
      { type: 'cache.added', entry: entry(), atMs: T0_MS + 102 }, // same bytes seen again: one row
      { type: 'cache.changed', entry: entry({ digest: 'd2' }), atMs: T0_MS + 103 },
      { type: 'ip.allocated', allocation: alloc(), atMs: T0_MS + 104 },
      { type: 'ip.allocated', allocation: alloc(), atMs: T0_MS + 105 }, // same holder: one row
      { type: 'ip.allocated', allocation: alloc({ containerId: 'next-holder' }), atMs: T0_MS + 106 },
      { type: 'cache.added', entry: entry({ path: broken, containerId: 'fixed', digest: 'd3' }), atMs: T0_MS + 107 }, // repaired
      { type: 'cache.removed', path: `${RESULTS}/podnet-filler-3-eth0`, dir: RESULTS, atMs: T0_MS + 108 },
      { type: 'ip.released', path: `${IPAM}/podnet/10.22.1.3`, dir: IPAM, atMs: T0_MS + 108 },
      { type: 'cache.added', entry: entry({ path: `${RESULTS}/podnet-filler-3-eth0`, containerId: 'filler-3', digest: 'f3b' }), atMs: T0_MS + 109 },
      reconciled(T0_MS + 110, [FILE, IP_FILE, broken, ...filler.flatMap((e) => (e.type === 'cache.added' ? [e.entry.path] : []))].filter((p) => !p.includes('filler-7-'))),
      // Seen again after the reconciliation, with the same bytes: last_seen moves on, nothing else.
      { type: 'cache.added', entry: entry({ digest: 'd2' }), atMs: T0_MS + 111 },
    ];
    expect(story.length).toBeGreaterThanOrEqual(64);
    const dump = (d: Database) => ({
      entries: d.prepare('SELECT path, digest, first_seen_ms, last_seen_ms, superseded_at_ms, removed_at_ms FROM cache_entries ORDER BY id').all(),
      ips: d.prepare('SELECT ip, container_id, pod_name, source, path, from_ms, to_ms FROM ip_history ORDER BY id').all(),
      findings: d.prepare('SELECT kind, subject, first_seen_ms, last_seen_ms, resolved_at_ms FROM cache_findings ORDER BY id').all(),
    });

    cache.writeCacheEvents(story);
    const oneByOneDb = openDatabase(path.join(dir, 'one-by-one.db'));
    const oneByOne = createCacheStore(oneByOneDb, { sinceMs: T0_MS - 1000 });
    for (const ev of story) oneByOne.writeCacheEvents([ev]);
    const batched = dump(db);
    expect(batched).toEqual(dump(oneByOneDb));
    oneByOneDb.close();

    expect(batched.entries).toHaveLength(80 + 2 + 1 + 1); // fillers, FILE's two versions, the repaired file, filler-3's new version
    expect(batched.entries.filter((e) => (e as { removed_at_ms: number | null }).removed_at_ms !== null)).toHaveLength(2); // filler-3's first, filler-7
    expect(batched.findings).toEqual([{ kind: 'empty-file', subject: broken, first_seen_ms: T0_MS + 100, last_seen_ms: T0_MS + 100, resolved_at_ms: T0_MS + 107 }]);
  });

  it('reads several containers\' entries in one query exactly as it reads each one, each capped on its own', () => {
    // CID's file rewritten past the cap (an ADD loop), a neighbour with two versions, one without any.
    const versions = MAX_CACHE_PAGE + 2;
    const events: CacheEvent[] = Array.from({ length: versions }, (_, i) => ({ type: 'cache.changed', entry: entry({ digest: `v${i}` }), atMs: T0_MS + i }));
    const other = `${RESULTS}/podnet-neighbour-eth0`;
    events.push(
      { type: 'cache.added', entry: entry({ path: other, containerId: 'neighbour', digest: 'n1' }), atMs: T0_MS + 5 },
      { type: 'cache.changed', entry: entry({ path: other, containerId: 'neighbour', digest: 'n2' }), atMs: T0_MS + 6 },
    );
    cache.writeCacheEvents(events);

    const ids = [CID, 'neighbour', 'no-such-container'];
    const batched = cache.entriesByContainer(ids);
    expect([...batched.keys()].sort()).toEqual(['neighbour', CID].sort());
    for (const id of ids) expect(batched.get(id) ?? []).toEqual(cache.entriesForContainer(id));
    // The oldest ones, oldest first, as one container's own query keeps them.
    expect(batched.get(CID)).toHaveLength(MAX_CACHE_PAGE);
    expect(batched.get(CID)![0]!.supersededAtMs).toBe(T0_MS + 1);
    expect(batched.get('neighbour')!.map((e) => e.removedAtMs ?? e.supersededAtMs)).toEqual([T0_MS + 6, null]);
    expect(cache.entriesByContainer([])).toEqual(new Map());
  });
});
