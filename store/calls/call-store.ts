/**
 * The store's front door: one object over an open database with the write
 * side (collector events), the read side (API queries) and the tracer log.
 * Each side lives in its own file; this one only wires them together.
 */

import type { Database } from 'better-sqlite3';
import { createCallLookups } from './call-lookups.js';
import { createCallReader } from './call-reader.js';
import { createCallWriter } from './call-writer.js';
import { createTracerEventLog } from '../tracer-events/index.js';
import type { CallStore } from './types.js';
import { writeTimingFor } from '../db/index.js';

export { createStoreListener, type StoreListener, type StoreListenerOptions } from './store-listener.js';
export type { CallStore } from './types.js';

export function createCallStore(db: Database): CallStore {
  const writer = createCallWriter(db);
  const reader = createCallReader(db);
  const tracer = createTracerEventLog(db);
  const lookups = createCallLookups(db);
  const timing = writeTimingFor(db);
  const pageCount = db.prepare<[], { page_count: number }>('PRAGMA page_count');
  const pageSize = db.prepare<[], { page_size: number }>('PRAGMA page_size');

  return {
    writeEvents: (events) => timing.time('calls', () => writer.writeEvents(events)),
    markRunningAsIncomplete: (reason) => timing.time('calls', () => writer.markRunningAsIncomplete(reason)),
    recordTracerEvent: (kind, detail, atUs) => timing.time('tracer-events', () => tracer.recordTracerEvent(kind, detail, atUs)),
    listTracerEvents: (limit) => tracer.listTracerEvents(limit),
    getCall: (id) => reader.getCall(id),
    listCalls: (filter, limit, cursor) => reader.listCalls(filter, limit, cursor),
    podCallGraph: (namespace, name, scope) => reader.podCallGraph(namespace, name, scope),
    childrenOf: (id) => reader.childrenOf(id),
    countCalls: () => reader.countCalls(),
    resolveContainerId: (prefix) => lookups.resolveContainerId(prefix),
    failureTexts: (ids) => lookups.failureTexts(ids),
    databaseSizeBytes: () => (pageCount.get()?.page_count ?? 0) * (pageSize.get()?.page_size ?? 0),

    close() {
      if (!db.open) return;
      try {
        // Cheap on close, and keeps the planner's statistics current for the list queries.
        db.pragma('optimize');
      } catch {
        // Best effort: a read-only or full disk must not stop a clean shutdown.
      }
      db.close();
    },
  };
}
