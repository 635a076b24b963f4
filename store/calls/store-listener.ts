/**
 * Plugs the store into the collector as a CallListener. The collector must
 * keep tracing whatever happens to the disk, so nothing thrown here reaches
 * it: failed writes go to `onError` and their events wait in a bounded queue
 * that is retried with the next batch. When the queue is full (in calls or
 * in payload bytes) the oldest calls are dropped and counted, trading
 * history for a daemon that stays up.
 */

import type { CallListener, CniCall, CollectorEvent } from '../../collector/index.js';
import { StoreError, isTransientStoreError } from '../db/index.js';
import { foldEvent } from './latest-events.js';
import type { CallStore } from './types.js';

export interface StoreListenerOptions {
  /** Calls (not events: a call's started and finished share a slot) kept for retry. */
  readonly maxPending?: number;
  /**
   * Payload bytes kept for retry. Counting calls alone is not enough: each
   * stream may hold megabytes, and a node agent that OOMs records nothing.
   */
  readonly maxPendingBytes?: number;
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
const DEFAULT_MAX_PENDING_BYTES = 256 * 1024 * 1024;

function payloadBytes(call: CniCall): number {
  let n = call.stdin.bytes.length + call.stdout.bytes.length + call.stderr.bytes.length;
  for (const h of call.helpers) n += h.stdout.bytes.length + h.stderr.bytes.length;
  return n;
}

export function createStoreListener(
  store: Pick<CallStore, 'writeEvents'>,
  onError: (err: StoreError) => void,
  options: StoreListenerOptions = {},
): StoreListener {
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  const maxPendingBytes = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
  // Keyed by call id, folded (see latest-events.ts): a call that starts and
  // finishes during an outage costs one slot, and Map order keeps oldest first.
  const pending = new Map<string, CollectorEvent>();
  let pendingBytes = 0;
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

  const add = (event: CollectorEvent) => {
    const before = pending.get(event.call.id);
    foldEvent(pending, event);
    const after = pending.get(event.call.id);
    if (after !== before) pendingBytes += (after ? payloadBytes(after.call) : 0) - (before ? payloadBytes(before.call) : 0);
  };

  const remove = (id: string) => {
    const event = pending.get(id);
    if (event === undefined) return;
    pending.delete(id);
    pendingBytes -= payloadBytes(event.call);
  };

  const trim = () => {
    for (const id of pending.keys()) {
      if (pending.size <= maxPending && pendingBytes <= maxPendingBytes) break;
      remove(id);
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
        remove(event.call.id);
      } catch (err) {
        if (isTransientStoreError(err)) return; // the disk went away meanwhile: keep the rest
        remove(event.call.id);
        dropped++;
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
      pendingBytes = 0;
      lastReported = null;
    } catch (err) {
      report(err);
      if (!isTransientStoreError(err)) isolateRefused(batch);
    }
    return pending.size === 0;
  };

  return {
    onEvents(events) {
      for (const event of events) add(event);
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
