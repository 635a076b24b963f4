/**
 * The read side: one call with its payloads, or pages of summaries for the
 * API's lists. Lists are newest first and paginated by keyset (see cursor.ts).
 */

import type { Database, Statement } from 'better-sqlite3';
import { FULL_COLUMNS, HELPER_SELECT_COLUMNS, SUMMARY_COLUMNS, toStoredCall, toSummary } from './call-decode.js';
import type { FullRow, HelperSelectRow, SummaryRow } from './call-decode.js';
import { callFilterConditions } from './call-filter-sql.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { CallFilter, CallPage, StoredCall, StoredCallSummary } from './types.js';

export interface CallReader {
  getCall(id: string): StoredCall | null;
  listCalls(filter: CallFilter, limit: number, cursor?: string | null): CallPage;
  listPodCalls(namespace: string, name: string): StoredCallSummary[];
  childrenOf(id: string): StoredCallSummary[];
  countCalls(): number;
}

/** Pages larger than this are clamped: a client asking for a million rows gets a page, not an OOM. */
export const MAX_PAGE_SIZE = 1_000;
/** A pod normally has a handful of calls; the cap only guards against a runaway CHECK loop. */
const MAX_POD_CALLS = 10_000;

export function createCallReader(db: Database): CallReader {
  const file = db.name;
  const getCallRow = db.prepare<[string], FullRow>(`SELECT ${FULL_COLUMNS} FROM calls WHERE id = ?`);
  const getHelpers = db.prepare<[string], HelperSelectRow>(`SELECT ${HELPER_SELECT_COLUMNS} FROM helpers WHERE call_id = ? ORDER BY seq`);
  const podCalls = db.prepare<[string, string], SummaryRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM calls WHERE pod_namespace = ? AND pod_name = ? ORDER BY started_at_us, id LIMIT ${MAX_POD_CALLS}`,
  );
  const children = db.prepare<[string], SummaryRow>(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE parent_id = ? ORDER BY started_at_us, id`);
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM calls');

  // Filters combine into a bounded set of SQL shapes (one per set of fields
  // present), so caching a statement per shape keeps "prepare once" without
  // building SQL from values.
  const listStatements = new Map<string, Statement<unknown[], SummaryRow>>();
  const listStatement = (sql: string) => {
    let stmt = listStatements.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare<unknown[], SummaryRow>(sql);
      listStatements.set(sql, stmt);
    }
    return stmt;
  };

  // Both reads in one snapshot, so a concurrent finish cannot pair the new row with the old helpers.
  const readCall = db.transaction((id: string): StoredCall | null => {
    const row = getCallRow.get(id);
    return row === undefined ? null : toStoredCall(row, getHelpers.all(id));
  });

  return {
    getCall: (id) => readCall(id),

    listCalls(filter, limit, cursor) {
      const pageSize = Math.min(Math.max(1, Math.floor(limit) || 1), MAX_PAGE_SIZE);
      const { conditions, params } = callFilterConditions(filter);
      if (cursor) {
        const key = decodeCursor(cursor, file);
        // Row-value comparison: strictly after the last row of the previous
        // page in (started_at_us DESC, id DESC) order; SQLite seeks the index to it.
        conditions.push('(started_at_us, id) < (?, ?)');
        params.push(key.startedAtUs, key.id);
      }
      const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
      const sql = `SELECT ${SUMMARY_COLUMNS} FROM calls ${where} ORDER BY started_at_us DESC, id DESC LIMIT ?`;
      // One row more than asked tells whether another page exists without a COUNT.
      const rows = listStatement(sql).all(...params, pageSize + 1);
      const more = rows.length > pageSize;
      const items = (more ? rows.slice(0, pageSize) : rows).map(toSummary);
      const last = items[items.length - 1];
      return { items, nextCursor: more && last ? encodeCursor({ startedAtUs: last.startedAtUs, id: last.id }) : null };
    },

    listPodCalls: (namespace, name) => podCalls.all(namespace, name).map(toSummary),
    childrenOf: (id) => children.all(id).map(toSummary),
    countCalls: () => count.get()?.n ?? 0,
  };
}
