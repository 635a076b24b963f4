/**
 * The daemon's cache side, kept out of run.ts: the cache store on the
 * daemon's database (created before the API, which reads it), the watcher
 * (started after the tracer, so the ADDs behind the files found at startup
 * are being recorded by then) and the listener between them.
 */

import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import type { CacheDeps } from '../api/index.js';
import { type CacheListener, createCacheWatcher, type CacheWatcher, type Redactor } from '../collector/index.js';
import { createCacheStoreListener, createCacheStore, type CacheStatus, type CacheStore } from '../store/index.js';
import { createTopic } from '../lib/index.js';
import type { DaemonConfig } from './config.js';

export interface CacheWiring {
  /** What the API reads; null when no directory is configured. */
  readonly reader: CacheStore | null;
  /**
   * Follows the watcher's events (the live tail); null when nothing is
   * watched. Usable before start(), so the API subscribes before the
   * startup scan announces the files already there.
   */
  readonly subscribe: ((listener: CacheListener) => () => void) | null;
  /** The watcher's state for /healthz and /metrics; null when nothing is watched. */
  readonly status: (() => CacheStatus) | null;
  /** The three above as the API takes them; null when nothing is watched. */
  readonly api: CacheDeps | null;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createCacheWiring(
  db: Database,
  config: Pick<DaemonConfig, 'cniCacheDirs' | 'hostLocalDirs' | 'cacheRescanMs' | 'db'>,
  log: Logger,
  redactor?: Redactor,
  runtimeJudges?: (containerId: string | null) => boolean,
): CacheWiring {
  if (config.cniCacheDirs.length === 0 && config.hostLocalDirs.length === 0) {
    return { reader: null, subscribe: null, status: null, api: null, start: async () => undefined, stop: async () => undefined };
  }
  const store = createCacheStore(db, { sinceMs: Date.now(), ...(runtimeJudges ? { runtimeJudges } : {}) });
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
  // The store listener first: a tail client told of a change can then find it in the store.
  const followers = createTopic<CacheListener>((err) => log.error({ err }, 'a CNI cache follower failed; its events are dropped'));
  const toFollowers: CacheListener = { onCacheEvents: (events) => followers.publish((f) => f.onCacheEvents(events)) };
  const subscribe = (follower: CacheListener) => followers.subscribe(follower);
  const status = (): CacheStatus => {
    const w = watcher?.status();
    return {
      running: w?.running ?? false,
      resultDirs: config.cniCacheDirs,
      ipamDirs: config.hostLocalDirs,
      watchedDirs: w?.watchedDirs ?? 0,
      entries: w?.entries ?? 0,
      allocations: w?.allocations ?? 0,
      problems: w?.problems ?? 0,
      openFindings: store.countOpenFindings(),
      lastRescanAt: w?.lastScanAt ?? null,
      lastError: w?.lastError ?? lastError,
      pendingWrites: listener.pendingCount,
      droppedWrites: listener.droppedCount,
    };
  };
  return {
    reader: store,
    subscribe,
    status,
    api: { reader: store, subscribe, status },
    async start() {
      watcher = createCacheWatcher({
        resultDirs: config.cniCacheDirs,
        ipamDirs: config.hostLocalDirs,
        rescanIntervalMs: config.cacheRescanMs,
        logger: log.child({ component: 'cache-watcher' }),
        ...(redactor ? { redact: redactor.cacheEntry } : {}),
      });
      watcher.subscribe(listener);
      watcher.subscribe(toFollowers);
      // The refresh timer after the startup scan: a link-and-findings pass over a half-read node is
      // wasted work, and it would compete with the scan for the CPU.
      await watcher.start();
      listener.start();
    },
    async stop() {
      await watcher?.stop();
      listener.stop();
    },
  };
}
