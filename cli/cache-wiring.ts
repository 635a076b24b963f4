/**
 * The daemon's cache side, kept out of run.ts: the cache store on the
 * daemon's database (created before the API, which reads it), the watcher
 * (started after the tracer, so the ADDs behind the files found at startup
 * are being recorded by then) and the listener between them.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { createCacheWatcher, type CacheWatcher } from '../collector/cache/cache-watcher.js';
import { createCacheStoreListener } from '../store/cache-listener.js';
import { createCacheStore, type CacheStore } from '../store/cache-store.js';
import type { DaemonConfig } from './config.js';

export interface CacheWiring {
  /** What the API reads; null when no directory is configured. */
  readonly reader: CacheStore | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createCacheWiring(db: Database, config: Pick<DaemonConfig, 'cniCacheDirs' | 'hostLocalDirs' | 'cacheRescanMs' | 'db'>, log: Logger): CacheWiring {
  if (config.cniCacheDirs.length === 0 && config.hostLocalDirs.length === 0) {
    return { reader: null, start: async () => undefined, stop: async () => undefined };
  }
  const store = createCacheStore(db, { sinceMs: Date.now() });
  let watcher: CacheWatcher | null = null;
  // Say a failing write once per cause, not once per batch (a full disk fails them all).
  let lastError: string | null = null;
  const listener = createCacheStoreListener(
    store,
    (err) => {
      if (err.message === lastError) return;
      lastError = err.message;
      log.error({ err: err.message }, 'cannot record CNI cache changes; keeping them in memory and retrying');
    },
    { file: config.db },
  );
  return {
    reader: store,
    async start() {
      watcher = createCacheWatcher({
        resultDirs: config.cniCacheDirs,
        ipamDirs: config.hostLocalDirs,
        rescanIntervalMs: config.cacheRescanMs,
        logger: log.child({ component: 'cache-watcher' }),
      });
      watcher.subscribe(listener);
      listener.start();
      await watcher.start();
    },
    async stop() {
      await watcher?.stop();
      listener.stop();
    },
  };
}
