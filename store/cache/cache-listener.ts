/**
 * Plugs the cache store into the cache watcher as a CacheListener, and
 * refreshes links and findings on a timer (the calls they depend on arrive
 * on their own schedule). As with calls, nothing thrown here reaches the
 * watcher: changes wait in the store's write-behind queue
 * (store/db/write-behind-queue.ts) while the database refuses them, and one
 * change it refuses on its own merits is dropped, not retried in front of
 * every later one.
 */

import type { CacheEvent, CacheListener } from '../../collector/index.js';
import type { CacheStore } from './cache-store.js';
import { createWriteBehindQueue, toStoreError, type StoreError } from '../db/index.js';

export interface CacheStoreListener extends CacheListener {
  readonly pendingCount: number;
  readonly droppedCount: number;
  /** Starts the refresh timer. */
  start(): void;
  /** Stops the timer and makes a last attempt to write what is pending. */
  stop(): void;
}

/** Changes kept while the database refuses them; past this, the oldest go (a later rescan re-announces whatever still exists). */
const MAX_PENDING = 100_000;

export function createCacheStoreListener(
  store: Pick<CacheStore, 'writeCacheEvents' | 'refresh'>,
  onError: (err: StoreError) => void,
  opts: { readonly refreshIntervalMs?: number; readonly file?: string } = {},
): CacheStoreListener {
  const file = opts.file ?? 'database';
  const queue = createWriteBehindQueue<CacheEvent>({
    write: (events) => store.writeCacheEvents(events),
    onError,
    toError: (err) => toStoreError(err, file, 'record CNI cache changes in'),
    maxPending: MAX_PENDING,
  });
  let timer: NodeJS.Timeout | null = null;

  const refresh = () => {
    queue.flush();
    try {
      store.refresh(Date.now());
    } catch (err) {
      onError(toStoreError(err, file, 'update CNI cache findings in'));
    }
  };

  return {
    get pendingCount() {
      return queue.pendingCount;
    },
    get droppedCount() {
      return queue.droppedCount;
    },
    onCacheEvents: (events) => queue.add(events),
    start() {
      timer ??= setInterval(refresh, opts.refreshIntervalMs ?? 1000);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      queue.flush();
    },
  };
}
