/**
 * The write side: collector events into `calls` and `helpers`. Statements
 * are prepared once and every batch is one transaction, which is what makes
 * tens of thousands of calls per second possible (a commit per row would
 * be bound by fsync and WAL-frame overhead instead).
 */

import type { Database } from 'better-sqlite3';
import type { CniCall, CollectorEvent } from '../../collector/index.js';
import { CALL_COLUMNS, FINISH_COLUMNS, HELPER_COLUMNS, IDENTITY_COLUMNS, callValues, finishValues, helperValues, identityValues } from './call-rows.js';
import { identityChanged } from './call-columns.js';
import { toStoreError } from '../db/index.js';
import { latestEventPerCall } from './latest-events.js';

export interface CallWriter {
  writeEvents(events: readonly CollectorEvent[]): void;
  markRunningAsIncomplete(reason: string): number;
}

const names = (cols: readonly string[]) => cols.join(', ');
const params = (cols: readonly string[]) => cols.map(() => '?').join(', ');

// A started row must never overwrite a finished one that got there first
// (events retried after a full disk can arrive late), hence DO NOTHING.
const INSERT_STARTED = `INSERT INTO calls (${names(CALL_COLUMNS)}) VALUES (${params(CALL_COLUMNS)}) ON CONFLICT (id) DO NOTHING`;

// A finish is an upsert done as UPDATE, then INSERT when no row was there
// (its started event was dropped, or came in the same batch). Same result as
// INSERT … ON CONFLICT (id) DO UPDATE, but the common case binds only the
// 19 values a finish changes (see FINISH_COLUMNS) instead of building the
// whole row, JSON included, to throw most of it away: ~10% of write time.
// Never INSERT OR REPLACE: it deletes the old row first, which would fire
// ON DELETE CASCADE and change the rowid for nothing.
const UPDATE_FINISHED = `UPDATE calls SET ${FINISH_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
// A wrapper that exec'd the real plugin in place after the started row was written renamed the call:
// its plugin, path, argv and CNI_* columns are written again.
const UPDATE_IDENTITY = `UPDATE calls SET ${IDENTITY_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;
const INSERT_FINISHED = `INSERT INTO calls (${names(CALL_COLUMNS)}) VALUES (${params(CALL_COLUMNS)})`;

const INSERT_HELPER = `INSERT INTO helpers (${names(HELPER_COLUMNS)}) VALUES (${params(HELPER_COLUMNS)})`;
const DELETE_HELPERS = 'DELETE FROM helpers WHERE call_id = ?';
const STATUS_OF = 'SELECT status FROM calls WHERE id = ?';
const INSERT_UPDATE = 'INSERT INTO call_updates (call_id, at_us) VALUES (?, ?)';
const MARK_INCOMPLETE = "UPDATE calls SET status = 'incomplete', incomplete_reason = ? WHERE status = 'running'";

/** Ids of the calls whose started event is in `events`. */
function startedIn(events: readonly CollectorEvent[]): Set<string> {
  const ids = new Set<string>();
  for (const e of events) if (e.type === 'call.started') ids.add(e.call.id);
  return ids;
}

export function createCallWriter(db: Database): CallWriter {
  const file = db.name;
  const insertStarted = db.prepare(INSERT_STARTED);
  const updateFinished = db.prepare(UPDATE_FINISHED);
  const insertFinished = db.prepare(INSERT_FINISHED);
  const updateIdentity = db.prepare(UPDATE_IDENTITY);
  const insertHelper = db.prepare(INSERT_HELPER);
  const deleteHelpers = db.prepare(DELETE_HELPERS);
  const markIncomplete = db.prepare<[string]>(MARK_INCOMPLETE);
  const statusOf = db.prepare<[string], { status: string }>(STATUS_OF);
  const insertUpdate = db.prepare<[string, number]>(INSERT_UPDATE);

  const insertHelpers = (call: CniCall) => {
    call.helpers.forEach((h, seq) => insertHelper.run(helperValues(call.id, seq, h)));
  };

  const writeBatch = db.transaction((events: readonly CollectorEvent[]) => {
    const startedHere = startedIn(events);
    for (const event of latestEventPerCall(events)) {
      const { call } = event;
      // A change to a call already stored ended is noted (call_updates), so the export sends it once
      // more as a log record; a running or missing row takes it as its first finish below.
      const updatesEnded = event.type === 'call.updated' && (statusOf.get(call.id)?.status ?? 'running') !== 'running';
      if (event.type === 'call.started') {
        // Helpers only if this insert created the row; otherwise the row's own are newer.
        const { changes } = insertStarted.run(callValues(call));
        if (changes > 0 && call.helpers.length > 0) insertHelpers(call);
      } else if (startedHere.has(call.id) && insertStarted.run(callValues(call)).changes > 0) {
        // Started and finished in this batch: no earlier batch wrote its row (its started event is here),
        // so one INSERT of the finished row replaces an UPDATE that finds nothing, the INSERT, and a
        // DELETE of helpers a new row cannot have (they reference it). Should a row be there after all,
        // the INSERT does nothing and the usual path below updates it.
        insertHelpers(call);
      } else if (updateFinished.run(finishValues(call)).changes === 0) {
        // No row yet: its started event was dropped, or folded into this one while both waited in the
        // write-behind queue. A new row has no helpers to replace.
        insertFinished.run(callValues(call));
        insertHelpers(call);
      } else {
        // An exec in place renamed the call after call.started: its identity columns follow.
        if (identityChanged(call)) updateIdentity.run(identityValues(call));
        // Replace, not append: the finished snapshot has every helper of the call.
        deleteHelpers.run(call.id);
        insertHelpers(call);
        if (updatesEnded) insertUpdate.run(call.id, Date.now() * 1000);
      }
    }
  });

  return {
    writeEvents(events) {
      if (events.length === 0) return;
      try {
        writeBatch(events);
      } catch (err) {
        throw toStoreError(err, file, 'write calls to');
      }
    },

    markRunningAsIncomplete(reason) {
      try {
        return markIncomplete.run(reason).changes;
      } catch (err) {
        throw toStoreError(err, file, 'update');
      }
    },
  };
}
