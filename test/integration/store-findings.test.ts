// The findings log read as people look at it: worst first, one item per kind and subject, paged with a total.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCacheStore, type CacheStore } from '../../store/cache/cache-store.js';
import { createFindingsLog, type FindingsLog } from '../../store/findings/cache-findings.js';
import { createFindingsReader, type FindingsReader } from '../../store/findings/findings-reader.js';
import { CACHE_FINDING_KINDS, FINDING_SEVERITY } from '../../store/findings/types.js';
import { finished, makeCall, T0_MS } from './api-harness.js';
import { tempStore, type TempStore } from './harness.js';

describe('findings, grouped and paged', () => {
  let t: TempStore;
  let log: FindingsLog;
  let reader: FindingsReader;

  beforeEach(() => {
    t = tempStore('cnirec-findings-');
    log = createFindingsLog(t.db);
    reader = createFindingsReader(t.db);
  });
  afterEach(() => t.remove());

  it('gives every kind a severity in one table', () => {
    for (const kind of CACHE_FINDING_KINDS) expect(['critical', 'warning', 'info']).toContain(FINDING_SEVERITY[kind]);
    expect(FINDING_SEVERITY['del-loop']).toBe('critical');
    expect(FINDING_SEVERITY['add-without-cache']).toBe('info');
  });

  it('orders the worst first, then the most recently seen, however many less severe ones were seen later', () => {
    for (let i = 0; i < 50; i++) log.open('add-without-cache', `call-${i}`, { message: 'no cache', callId: `call-${i}` }, T0_MS + 10_000 + i);
    log.open('leaked-ip', '/ipam/10.0.0.9', { message: 'leak', ip: '10.0.0.9' }, T0_MS + 5_000);
    log.open('del-loop', 'ctr-a/eth0', { message: 'DEL loops', podNamespace: 'shop', podName: 'cart-0', count: 7 }, T0_MS);
    const page = reader.findingGroups({ limit: 3 });
    expect(page.items.map((f) => f.kind)).toEqual(['del-loop', 'leaked-ip', 'add-without-cache']);
    expect(page.items[0]).toMatchObject({ severity: 'critical', podNamespace: 'shop', podName: 'cart-0', count: 7, occurrences: 1 });
    expect(page.items[2]!.subject).toBe('call-49');
    expect(page.total).toBe(52);
    expect(page.byKind).toEqual({ 'del-loop': 1, 'leaked-ip': 1, 'add-without-cache': 50 });
  });

  it('pages through every group exactly once, the total the same on every page', () => {
    for (let i = 0; i < 25; i++) log.open(i % 2 ? 'leaked-ip' : 'add-without-cache', `s-${i}`, { message: 'm' }, T0_MS + (i % 5));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: ReturnType<FindingsReader['findingGroups']> = reader.findingGroups({ limit: 4, cursor });
      expect(page.total).toBe(25);
      seen.push(...page.items.map((f) => f.subject));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
  });

  it('groups a condition that ended and came back into one item with its occurrences and first sighting', () => {
    log.open('del-loop', 'ctr-a/eth0', { message: 'first time', count: 3 }, T0_MS);
    log.resolve('del-loop', 'ctr-a/eth0', T0_MS + 1_000);
    log.open('del-loop', 'ctr-a/eth0', { message: 'again', count: 4 }, T0_MS + 60_000);
    const [open] = reader.findingGroups({ limit: 10 }).items;
    expect(open).toMatchObject({ message: 'again', count: 4, occurrences: 2, groupFirstSeenMs: T0_MS, resolvedAtMs: null });
    log.resolve('del-loop', 'ctr-a/eth0', T0_MS + 61_000);
    expect(reader.findingGroups({ limit: 10 }).total).toBe(0);
    const all = reader.findingGroups({ limit: 10, includeResolved: true });
    expect(all.total).toBe(1);
    expect(all.items[0]).toMatchObject({ occurrences: 2, resolvedAtMs: T0_MS + 61_000 });
  });

  it('filters by several kinds, by pod and by container', () => {
    log.open('del-loop', 'a', { message: 'm', podNamespace: 'shop', podName: 'cart-0', containerId: 'ctr-a' }, T0_MS);
    log.open('add-loop', 'b', { message: 'm', podNamespace: 'shop', podName: 'web-1' }, T0_MS);
    log.open('leaked-ip', 'c', { message: 'm', containerId: 'ctr-a' }, T0_MS);
    expect(reader.findingGroups({ limit: 10, kinds: ['del-loop', 'add-loop'] }).items.map((f) => f.subject).sort()).toEqual(['a', 'b']);
    expect(reader.findingGroups({ limit: 10, pod: { namespace: 'shop', name: 'cart-0' } }).items.map((f) => f.subject)).toEqual(['a']);
    expect(reader.findingGroups({ limit: 10, containerId: 'ctr-a' }).items.map((f) => f.subject).sort()).toEqual(['a', 'c']);
  });

  it('refuses a cursor it did not issue', () => {
    expect(() => reader.findingGroups({ limit: 1, cursor: 'bm9wZQ' })).toThrow(/not issued by this store/);
  });
});

describe('an ADD without a cache file', () => {
  let t: TempStore;
  let cache: CacheStore;
  const RESULTS = '/var/lib/cni/results';

  beforeEach(() => {
    t = tempStore('cnirec-add-without-cache-');
    cache = createCacheStore(t.db, { sinceMs: T0_MS - 1000, graceMs: 1000 });
    cache.writeCacheEvents([{ type: 'cache.reconciled', atMs: T0_MS - 500, dirs: [RESULTS], livePaths: [], watchingResults: true }]);
  });
  afterEach(() => t.remove());

  it('is information, names its pod, and ends when the attachment is deleted (its DEL succeeded), never to reopen', () => {
    const add = makeCall({ at: 1_000_000, containerId: 'by-hand', podName: 'demo-web' });
    t.store.writeEvents([finished(add)]);
    cache.refresh(T0_MS + 10_000);
    const [open] = cache.findingGroups({ limit: 10 }).items;
    expect(open).toMatchObject({ kind: 'add-without-cache', severity: 'info', podNamespace: 'demo', podName: 'demo-web', callId: add.id });

    t.store.writeEvents([finished(makeCall({ at: 5_000_000, command: 'DEL', containerId: 'by-hand', podName: 'demo-web' }))]);
    cache.refresh(T0_MS + 12_000);
    cache.refresh(T0_MS + 20_000);
    expect(cache.findingGroups({ limit: 10 }).total).toBe(0);
    expect(cache.findingGroups({ limit: 10, includeResolved: true }).items).toEqual([expect.objectContaining({ kind: 'add-without-cache', occurrences: 1 })]);
  });

  it('stays open while its DEL keeps failing', () => {
    const add = makeCall({ at: 1_000_000, containerId: 'by-hand' });
    t.store.writeEvents([finished(add), finished(makeCall({ at: 5_000_000, command: 'DEL', containerId: 'by-hand', exit: 1 }))]);
    cache.refresh(T0_MS + 10_000);
    expect(cache.findingGroups({ limit: 10 }).total).toBe(1);
  });
});
