/**
 * Plugs the cache store into the cache watcher as a CacheListener, and
 * refreshes links and findings on a timer (the calls they depend on arrive
 * on their own schedule). As with calls, nothing thrown here reaches the
 * watcher: a failed batch waits, bounded, and is retried with the next one.
 */

import type { CacheEvent, CacheListener } from '../../collector/index.js';
import type { CacheStore } from './cache-store.js';
import { toStoreError, type StoreError } from '../db/index.js';

export interface CacheStoreListener extends CacheListener {
  readonly pendingCount: number;
  readonly droppedCount: number;
  /** Starts the refresh timer. */
  start(): void;
  /** Stops the timer and makes a last attempt to write what is pending. */
  stop(): void;
}

const MAX_PENDING = 100_000;

export function createCacheStoreListener(
  store: Pick<CacheStore, 'writeCacheEvents' | 'refresh'>,
  onError: (err: StoreError) => void,
  opts: { readonly refreshIntervalMs?: number; readonly file?: string } = {},
): CacheStoreListener {
  let pending: CacheEvent[] = [];
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;

  const flush = () => {
    if (pending.length === 0) return;
    try {
      store.writeCacheEvents(pending);
      pending = [];
    } catch (err) {
      onError(toStoreError(err, opts.file ?? 'database', 'record CNI cache changes in'));
      if (pending.length > MAX_PENDING) {
        // Oldest first out: a later rescan re-announces whatever still exists.
        dropped += pending.length - MAX_PENDING;
        pending = pending.slice(-MAX_PENDING);
      }
    }
  };

  const refresh = () => {
    flush();
    try {
      store.refresh(Date.now());
    } catch (err) {
      onError(toStoreError(err, opts.file ?? 'database', 'update CNI cache findings in'));
    }
  };

  return {
    get pendingCount() {
      return pending.length;
    },
    get droppedCount() {
      return dropped;
    },
    onCacheEvents(events) {
      pending.push(...events);
      flush();
    },
    start() {
      timer ??= setInterval(refresh, opts.refreshIntervalMs ?? 1000);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      flush();
    },
  };
}
