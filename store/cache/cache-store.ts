/**
 * The cache side of the store, beside CallStore on the same database: the
 * watcher's events in (cache-writer), links and findings derived with the
 * calls (cache-links), queries out (cache-reader). Wiring only.
 */

import type { Database } from 'better-sqlite3';
import type { CacheEvent } from '../../collector/index.js';
import { createCacheLinker, type CacheLinkOptions } from './cache-links.js';
import { createCacheReader, type CacheReader } from './cache-reader.js';
import { createCacheWriter } from './cache-writer.js';
import { writeTimingFor } from '../db/index.js';

export interface CacheStore extends CacheReader {
  writeCacheEvents(events: readonly CacheEvent[]): void;
  /** Links entries to calls and updates findings; run after writes and on a timer. */
  refresh(nowMs: number): void;
  /** When the watcher's startup scan was complete (every directory read once); null before. */
  reconciledAtMs(): number | null;
}

export interface CacheStoreOptions extends CacheLinkOptions {
  /** When this daemon started: file problems older than that and not seen again are resolved on reconciliation. */
  readonly sinceMs?: number;
}

export function createCacheStore(db: Database, opts: CacheStoreOptions = {}): CacheStore {
  const writer = createCacheWriter(db, { sinceMs: opts.sinceMs ?? Date.now() });
  const linker = createCacheLinker(db, opts);
  const reader = createCacheReader(db);
  const timing = writeTimingFor(db);
  // Until the watcher has read the result directories once, "no cache file" means nothing.
  let watchedSinceMs: number | null = null;
  let reconciledAtMs: number | null = null;
  return {
    ...reader,
    writeCacheEvents(events) {
      timing.time('cache', () => writer.writeCacheEvents(events));
      for (const ev of events) {
        if (ev.type !== 'cache.reconciled') continue;
        reconciledAtMs ??= ev.atMs;
        if (ev.watchingResults && watchedSinceMs === null) watchedSinceMs = ev.atMs;
      }
    },
    reconciledAtMs: () => reconciledAtMs,
    refresh(nowMs) {
      timing.time('cache', () => {
        linker.link(nowMs);
        linker.detect(nowMs, watchedSinceMs);
      });
    },
  };
}
