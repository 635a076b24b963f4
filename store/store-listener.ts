/**
 * Plugs the store into the collector as a CallListener. The collector must
 * keep tracing whatever happens to the disk, so nothing thrown here reaches
 * it: failed writes go to `onError` and their events wait in a bounded queue
 * that is retried with the next batch. When the queue is full the oldest
 * calls are dropped and counted, trading history for a daemon that stays up.
 */

import type { CallListener, CollectorEvent } from '../collector/types.js';
import { StoreError, isTransientStoreError } from './errors.js';
import { foldEvent } from './latest-events.js';
import type { CallStore } from './types.js';

export interface StoreListenerOptions {
  /** Calls (not events: a call's started and finished share a slot) kept for retry. */
  readonly maxPending?: number;
}

export interface StoreListener extends CallListener {
  /** Calls waiting to be written. */
  readonly pendingCount: number;
  /** Calls given up on: pushed out of a full queue, or refused by the database itself. */
  readonly droppedCount: number;
  /** Retries the queue now (a timer, shutdown); true when nothing is left pending. */
  flush(): boolean;
}

const DEFAULT_MAX_PENDING = 10_000;

export function createStoreListener(
  store: Pick<CallStore, 'writeEvents'>,
  onError: (err: StoreError) => void,
  options: StoreListenerOptions = {},
): StoreListener {
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  // Keyed by call id, folded (see latest-events.ts): a call that starts and
  // finishes during an outage costs one slot, and Map order keeps oldest first.
  const pending = new Map<string, CollectorEvent>();
  let dropped = 0;
  // A full disk fails every batch until someone frees space: say so once per
  // outage (or when the reason changes), not once per batch.
  let lastReported: string | null = null;

  const report = (thrown: unknown) => {
    const err = asStoreError(thrown);
    const key = `${err.code}:${err.code === 'internal' ? err.message : ''}`;
    if (key === lastReported) return;
    lastReported = key;
    try {
      onError(err);
    } catch {
      // The error handler failing must not take the collector down either.
    }
  };

  const trim = () => {
    for (const id of pending.keys()) {
      if (pending.size <= maxPending) break;
      pending.delete(id);
      dropped++;
    }
  };

  // Some event in the batch is refused on its own merits (a value the schema
  // rejects), so the whole batch would fail forever: write the events one by
  // one and drop only those the database refuses.
  const isolateRefused = (batch: readonly CollectorEvent[]) => {
    for (const event of batch) {
      try {
        store.writeEvents([event]);
        pending.delete(event.call.id);
      } catch (err) {
        if (isTransientStoreError(err)) return; // the disk went away meanwhile: keep the rest
        pending.delete(event.call.id);
        dropped++;
        lastReported = null; // each refused call is worth its own report
        report(err);
      }
    }
  };

  const flush = (): boolean => {
    if (pending.size === 0) return true;
    const batch = [...pending.values()];
    try {
      store.writeEvents(batch);
      pending.clear();
      lastReported = null;
    } catch (err) {
      report(err);
      if (!isTransientStoreError(err)) isolateRefused(batch);
    }
    return pending.size === 0;
  };

  return {
    onEvents(events) {
      for (const event of events) foldEvent(pending, event);
      trim();
      flush();
    },
    flush,
    get pendingCount() {
      return pending.size;
    },
    get droppedCount() {
      return dropped;
    },
  };
}

/** CallStore.writeEvents throws StoreErrors; anything else (a test double, a bug) is wrapped so onError sees one type. */
function asStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const detail = err instanceof Error ? err.message : String(err);
  return new StoreError('internal', '', `Cannot write calls to the database: ${detail}.`, { cause: err });
}
