/**
 * The daemon's write path to SQLite, made to outlive a full or read-only
 * disk: calls and tracer events wait in bounded queues (see
 * store/calls/store-listener.ts, store/tracer-events/tracer-event-queue.ts) and are retried on a
 * timer, so writing resumes on its own when space returns even if no new call
 * comes. An outage is logged once when it starts (and when its reason
 * changes) and once when it ends, never once per call; /healthz and /metrics
 * read `status()`.
 */

import type { Logger } from 'pino';
import type { CallListener } from '../collector/index.js';
import { isoFromMs } from '../lib/index.js';
import { createStoreListener, type StoreListener, createTracerEventQueue, type TracerEventQueue, type StoreError, type CallStore, type TracerEventKind, type StoreStatus } from '../store/index.js';

/** How often waiting writes are retried while the database refuses them. */
const RETRY_INTERVAL_MS = 1_000;

export interface StoreWiring {
  /** Subscribe this to the collector. */
  readonly listener: CallListener;
  recordTracerEvent(kind: TracerEventKind, detail: unknown, atUs?: number): void;
  status(): StoreStatus;
  /** Last attempt at writing what waits (shutdown); true when nothing was left behind. */
  flush(): boolean;
  stop(): void;
}

export function createStoreWiring(store: CallStore, log: Logger): StoreWiring {
  let lastError: string | null = null;
  let failingSince: number | null = null;
  let lastSize = 0;

  const onError = (err: StoreError) => {
    failingSince ??= Date.now();
    // Both queues report the same outage: log it once, and again only if the reason changes.
    if (err.message === lastError) return;
    lastError = err.message;
    log.error({ code: err.code, err: err.message }, 'cannot write to the database; keeping calls in memory and retrying every second');
  };
  const calls: StoreListener = createStoreListener(store, onError);
  const tracer: TracerEventQueue = createTracerEventQueue(store, onError);

  const settle = () => {
    if (failingSince === null || calls.pendingCount > 0 || tracer.pendingCount > 0) return;
    log.warn(
      { outageSeconds: Math.round((Date.now() - failingSince) / 100) / 10, droppedWrites: calls.droppedCount },
      'the database is writable again; the calls kept in memory are stored',
    );
    failingSince = null;
    lastError = null;
  };

  const flush = () => {
    const done = tracer.flush() && calls.flush();
    settle();
    return done;
  };

  const timer = setInterval(() => {
    if (calls.pendingCount > 0 || tracer.pendingCount > 0) flush();
  }, RETRY_INTERVAL_MS);
  timer.unref();

  return {
    listener: {
      onEvents(events) {
        calls.onEvents(events);
        settle();
      },
    },
    recordTracerEvent(kind, detail, atUs = Date.now() * 1000) {
      tracer.record(kind, detail, atUs);
      settle();
    },
    status() {
      try {
        lastSize = store.databaseSizeBytes();
      } catch {
        // keep the last size we could read
      }
      return {
        writable: failingSince === null,
        lastError,
        failingSince: failingSince === null ? null : isoFromMs(failingSince),
        pendingWrites: calls.pendingCount,
        droppedWrites: calls.droppedCount + tracer.droppedCount,
        databaseBytes: lastSize,
      };
    },
    flush,
    stop() {
      clearInterval(timer);
    },
  };
}
