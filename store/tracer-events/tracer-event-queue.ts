/**
 * Tracer events (started, gap, restarted, stopped) written the way calls
 * are (store/db/write-behind-queue.ts): never throwing at the caller, kept
 * in a small bounded queue while the disk is full or read-only, and written
 * in order once it is back. A gap that happens during a disk outage must
 * still be on record afterwards.
 */

import { StoreError, createWriteBehindQueue } from '../db/index.js';
import type { TracerEventKind } from './types.js';

/** Where the queue writes: the call store's tracer event log. */
export interface TracerEventSink {
  recordTracerEvent(kind: TracerEventKind, detail: unknown, atUs: number): void;
}

export interface TracerEventQueue {
  record(kind: TracerEventKind, detail: unknown, atUs: number): void;
  /** Retries what is waiting; true when nothing is left. */
  flush(): boolean;
  readonly pendingCount: number;
  /** Events given up on: pushed out of the full queue, or refused by the database. */
  readonly droppedCount: number;
}

interface Pending {
  readonly kind: TracerEventKind;
  readonly detail: unknown;
  readonly atUs: number;
}

/** Tracer events are rare (a few per restart): this many cover hours of a crash-looping tracer. */
const DEFAULT_MAX_PENDING = 1_000;

export function createTracerEventQueue(store: TracerEventSink, onError: (err: StoreError) => void, maxPending = DEFAULT_MAX_PENDING): TracerEventQueue {
  const queue = createWriteBehindQueue<Pending>({
    // One event a write: the sink records one at a time, and a batch must be all or nothing.
    write: ([e]) => store.recordTracerEvent(e!.kind, e!.detail, e!.atUs),
    maxBatch: 1,
    onError,
    toError: (err) => new StoreError('internal', '', `Cannot record a tracer event: ${String(err)}.`, { cause: err }),
    maxPending,
  });
  return {
    record: (kind, detail, atUs) => queue.add([{ kind, detail, atUs }]),
    flush: () => queue.flush(),
    get pendingCount() {
      return queue.pendingCount;
    },
    get droppedCount() {
      return queue.droppedCount;
    },
  };
}
