/**
 * Tracer events (started, gap, restarted, stopped) written the way calls
 * are: never throwing at the caller, kept in a small bounded queue while the
 * disk is full or read-only, and written in order once it is back. A gap
 * that happens during a disk outage must still be on record afterwards.
 */

import { StoreError, isTransientStoreError } from '../db/index.js';
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

export function createTracerEventQueue(
  store: TracerEventSink,
  onError: (err: StoreError) => void,
  maxPending = DEFAULT_MAX_PENDING,
): TracerEventQueue {
  const pending: Pending[] = [];
  let dropped = 0;

  const flush = (): boolean => {
    while (pending.length > 0) {
      const next = pending[0]!;
      try {
        store.recordTracerEvent(next.kind, next.detail, next.atUs);
      } catch (err) {
        const storeError = err instanceof StoreError ? err : new StoreError('internal', '', `Cannot record a tracer event: ${String(err)}.`, { cause: err });
        try {
          onError(storeError);
        } catch {
          // Reporting must not break the caller either.
        }
        if (isTransientStoreError(storeError)) return false;
        dropped++; // refused on its own merits: retrying would fail forever
      }
      pending.shift();
    }
    return true;
  };

  return {
    record(kind, detail, atUs) {
      pending.push({ kind, detail, atUs });
      if (pending.length > maxPending) {
        pending.shift();
        dropped++;
      }
      flush();
    },
    flush,
    get pendingCount() {
      return pending.length;
    },
    get droppedCount() {
      return dropped;
    },
  };
}
