/**
 * Plugs the store into the collector as a CallListener. The collector must
 * keep tracing whatever happens to the disk, so nothing thrown here reaches
 * it: calls wait in the store's write-behind queue (store/db/write-behind-queue.ts)
 * while the database refuses them, bounded in calls and in payload bytes.
 */

import type { CallListener, CniCall, CollectorEvent } from '../../collector/index.js';
import { StoreError, createWriteBehindQueue } from '../db/index.js';
import { laterEvent } from './latest-events.js';
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
  const queue = createWriteBehindQueue<CollectorEvent>({
    write: (events) => store.writeEvents(events),
    onError,
    toError: (err) => new StoreError('internal', '', `Cannot write calls to the database: ${err instanceof Error ? err.message : String(err)}.`, { cause: err }),
    maxPending: options.maxPending ?? DEFAULT_MAX_PENDING,
    maxPendingBytes: options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES,
    sizeOf: (event) => payloadBytes(event.call),
    // One slot per call (see latest-events.ts): a call that starts and finishes during an outage costs one.
    keyOf: (event) => event.call.id,
    merge: laterEvent,
  });
  return {
    onEvents: (events) => queue.add(events),
    flush: () => queue.flush(),
    get pendingCount() {
      return queue.pendingCount;
    },
    get droppedCount() {
      return queue.droppedCount;
    },
  };
}
