/**
 * The tracer's own history (started, stopped, lost events, mode changes),
 * kept beside the calls so a gap in the calls can be explained later.
 */

import type { Database } from 'better-sqlite3';
import { toStoreError } from '../db/index.js';
import type { StoredTracerEvent, TracerEventKind } from './types.js';

export interface TracerEventLog {
  recordTracerEvent(kind: TracerEventKind, detail: unknown, atUs: number): void;
  listTracerEvents(limit: number): StoredTracerEvent[];
}

interface TracerEventRow {
  id: number;
  at_us: number;
  kind: string;
  detail_json: string;
}

const MAX_EVENTS_PER_READ = 1_000;

export function createTracerEventLog(db: Database): TracerEventLog {
  const file = db.name;
  const insert = db.prepare<[number, string, string]>('INSERT INTO tracer_events (at_us, kind, detail_json) VALUES (?, ?, ?)');
  const recent = db.prepare<[number], TracerEventRow>('SELECT id, at_us, kind, detail_json FROM tracer_events ORDER BY at_us DESC, id DESC LIMIT ?');

  return {
    recordTracerEvent(kind, detail, atUs) {
      try {
        // `?? null`: JSON.stringify(undefined) is undefined, which the NOT NULL column refuses.
        insert.run(Math.floor(atUs), kind, JSON.stringify(detail ?? null));
      } catch (err) {
        throw toStoreError(err, file, 'record a tracer event in');
      }
    },

    listTracerEvents(limit) {
      const n = Math.min(Math.max(1, Math.floor(limit) || 1), MAX_EVENTS_PER_READ);
      return recent.all(n).map((r) => ({ id: r.id, atUs: r.at_us, kind: r.kind, detail: JSON.parse(r.detail_json) as unknown }));
    },
  };
}
