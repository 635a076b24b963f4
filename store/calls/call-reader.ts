/**
 * The read side: one call with its payloads, or pages of summaries for the
 * API's lists. Lists are newest first and paginated by keyset (see cursor.ts).
 */

import type { Database, Statement } from 'better-sqlite3';
import { FULL_COLUMNS, HELPER_SELECT_COLUMNS, SUMMARY_COLUMNS, callFromRaw, helperFromRaw, summariesFromRaw } from './call-decode.js';
import { callFilterConditions } from './call-filter-sql.js';
import type { SqlValue } from './call-rows.js';
import { decodeCursor, encodeCursor, type CursorKey } from './cursor.js';
import { createPodCallReader } from './pod-calls.js';
import type { CallFilter, CallPage, PodCallGraph, PodCallScope, StoredCall, StoredCallSummary } from './types.js';

export interface CallReader {
  getCall(id: string): StoredCall | null;
  listCalls(filter: CallFilter, limit: number, cursor?: string | null): CallPage;
  podCallGraph(namespace: string, name: string, scope?: PodCallScope): PodCallGraph;
  childrenOf(id: string): StoredCallSummary[];
  countCalls(): number;
}

/** Pages larger than this are clamped: a client asking for a million rows gets a page, not an OOM. */
export const MAX_PAGE_SIZE = 1_000;

/**
 * The SQL of one page: the filter's conditions, strictly after `after` in
 * (started_at_us DESC, id DESC) order, the page size as the last parameter
 * (not in `params`). Exported for the query-plan tests.
 */
export function listCallsQuery(filter: CallFilter, after: CursorKey | null): { sql: string; params: SqlValue[] } {
  const { conditions, params } = callFilterConditions(filter);
  if (after) {
    // Row-value comparison: strictly after the last row of the previous
    // page in (started_at_us DESC, id DESC) order; SQLite seeks the index to it.
    conditions.push('(started_at_us, id) < (?, ?)');
    params.push(after.startedAtUs, after.id);
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM calls ${where} ORDER BY started_at_us DESC, id DESC LIMIT ?`, params };
}

export function createCallReader(db: Database): CallReader {
  const file = db.name;
  // Raw rows throughout: see call-decode.ts.
  const getCallRow = db.prepare<[string], unknown[]>(`SELECT ${FULL_COLUMNS} FROM calls WHERE id = ?`).raw(true);
  const getHelpers = db.prepare<[string], unknown[]>(`SELECT ${HELPER_SELECT_COLUMNS} FROM helpers WHERE call_id = ? ORDER BY seq`).raw(true);
  const children = db.prepare<[string], unknown[]>(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE parent_id = ? ORDER BY started_at_us, id`).raw(true);
  const pods = createPodCallReader(db);
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM calls');

  // Filters combine into a bounded set of SQL shapes (one per set of fields
  // present), so caching a statement per shape keeps "prepare once" without
  // building SQL from values.
  const listStatements = new Map<string, Statement<unknown[], unknown[]>>();
  const listStatement = (sql: string) => {
    let stmt = listStatements.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare<unknown[], unknown[]>(sql).raw(true);
      listStatements.set(sql, stmt);
    }
    return stmt;
  };

  // Both reads in one snapshot, so a concurrent finish cannot pair the new row with the old helpers.
  const readCall = db.transaction((id: string): StoredCall | null => {
    const row = getCallRow.get(id);
    return row === undefined ? null : callFromRaw(row, getHelpers.all(id).map(helperFromRaw));
  });

  return {
    getCall: (id) => readCall(id),

    listCalls(filter, limit, cursor) {
      const pageSize = Math.min(Math.max(1, Math.floor(limit) || 1), MAX_PAGE_SIZE);
      const { sql, params } = listCallsQuery(filter, cursor ? decodeCursor(cursor, file) : null);
      // One row more than asked tells whether another page exists without a COUNT.
      const rows = listStatement(sql).all(...params, pageSize + 1);
      const more = rows.length > pageSize;
      const items = summariesFromRaw(more ? rows.slice(0, pageSize) : rows);
      const last = items[items.length - 1];
      return { items, nextCursor: more && last ? encodeCursor({ startedAtUs: last.startedAtUs, id: last.id }) : null };
    },

    podCallGraph: (namespace, name, scope) => pods.podCallGraph(namespace, name, scope),
    childrenOf: (id) => summariesFromRaw(children.all(id)),
    countCalls: () => count.get()?.n ?? 0,
  };
}
