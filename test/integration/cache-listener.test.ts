// A CNI cache change the database refuses (here: a format its CHECK constraint does not know) is dropped alone:
// the changes after it are stored, instead of piling up behind it until 100,000 of them are thrown away.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CacheEntry, CacheEvent } from '../../collector/cache/cache-types.js';
import { createCacheStoreListener } from '../../store/cache/cache-listener.js';
import { createCacheStore, type CacheStore } from '../../store/cache/cache-store.js';
import { openDatabase, type Database, type StoreError } from '../../store/index.js';

const RESULTS = '/var/lib/cni/results';
const T0 = 1_763_750_000_000;

const entry = (cid: string, over: Partial<CacheEntry> = {}): CacheEntry => ({
  path: `${RESULTS}/podnet-${cid}-eth0`,
  dir: RESULTS,
  format: 'cniCacheV1',
  containerId: cid,
  networkName: 'podnet',
  ifName: 'eth0',
  netns: null,
  cniArgs: [],
  capabilityArgs: null,
  config: { name: 'podnet' },
  configProblem: null,
  result: { ips: [] },
  ips: [],
  pod: null,
  digest: `d-${cid}`,
  mtimeMs: T0,
  ...over,
});
const added = (e: CacheEntry): CacheEvent => ({ type: 'cache.added', entry: e, atMs: T0 + 1 });

describe('the cache store listener', () => {
  let db: Database;
  let store: CacheStore;
  beforeEach(() => void (store = createCacheStore((db = openDatabase(':memory:')), { sinceMs: T0 })));
  afterEach(() => db.close());

  it('drops a change the database refuses and stores everything around and after it', () => {
    const errors: StoreError[] = [];
    const listener = createCacheStoreListener(store, (err) => errors.push(err), { file: 'c.db' });
    const refused = entry('broken', { format: 'bogus' as CacheEntry['format'] });
    listener.onCacheEvents([added(entry('a')), added(refused), added(entry('b'))]);
    listener.onCacheEvents([added(entry('c'))]);
    listener.onCacheEvents([added(entry('d'))]);

    const stored = store.listCacheEntries({}).map((e) => e.containerId).sort();
    expect(stored).toEqual(['a', 'b', 'c', 'd']);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([0, 1]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/CHECK constraint/);
  });
});
