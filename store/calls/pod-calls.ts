/**
 * A pod's calls as the pod story needs them, in a few set-based queries:
 * the pod's own calls, every call they delegated to (at any depth, whether
 * or not it carries the pod's CNI_ARGS) and the helper processes of all of
 * them, sizes only. One query per level of delegation (two or three on a
 * real node) plus one for helpers, instead of two per call; no payloads.
 */

import type { Database } from 'better-sqlite3';
import { byStartThenId, HELPER_SUMMARY_COLUMNS, SUMMARY_COLUMNS, helperSummaryFromRaw, summariesAsJsonSql, summariesFromJson } from './call-decode.js';
import type { PodCallGraph, PodCallScope, StoredCallSummary, StoredHelperSummary } from './types.js';

/**
 * A pod normally has a handful of calls; the cap guards against a runaway
 * ADD/DEL loop. Past it the newest calls are kept, as they are the ones
 * being debugged, and the graph says it was truncated.
 */
export const MAX_POD_CALLS = 10_000;
/** Real delegation is two or three levels deep (bridge → host-local); this only stops a corrupt parent chain. */
export const MAX_DELEGATION_DEPTH = 16;

/** The statements, exported for the query-plan tests. The set queries take their ids as one JSON array (json_each): one query per set. */
export const POD_GRAPH_SQL = {
  // Both read as one JSON text (see summariesAsJsonSql): a pod's calls are scattered over the file.
  podCalls: summariesAsJsonSql(
    // Newest first along calls_by_pod, one more than the cap to tell whether older ones were left out.
    // The window is always bound (the whole time line when none was asked for): one statement, one index range.
    `SELECT ${SUMMARY_COLUMNS} FROM calls WHERE pod_namespace = ? AND pod_name = ? AND started_at_us >= ? AND started_at_us < ?
      ORDER BY started_at_us DESC, id DESC LIMIT ${MAX_POD_CALLS + 1}`,
  ),
  // One pod of a reused name (its K8S_POD_UID): along calls_by_pod_uid, not through the name's whole history.
  podCallsOfUid: summariesAsJsonSql(
    `SELECT ${SUMMARY_COLUMNS} FROM calls WHERE pod_uid = ? AND pod_namespace = ? AND pod_name = ? AND started_at_us >= ? AND started_at_us < ?
      ORDER BY started_at_us DESC, id DESC LIMIT ${MAX_POD_CALLS + 1}`,
  ),
  // Ids only: calls_by_parent covers them, and most children are the pod's own calls, already read.
  // Unordered: only which ids are new matters, and those are read (and sorted) by byIds.
  childIds: 'SELECT id FROM calls WHERE parent_id IN (SELECT value FROM json_each(?))',
  byIds: summariesAsJsonSql(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE id IN (SELECT value FROM json_each(?))`),
  helpers: `SELECT ${HELPER_SUMMARY_COLUMNS} FROM helpers WHERE call_id IN (SELECT value FROM json_each(?)) ORDER BY call_id, seq`,
} as const;

export interface PodCallReader {
  podCallGraph(namespace: string, name: string, scope?: PodCallScope): PodCallGraph;
}

export function createPodCallReader(db: Database): PodCallReader {
  const podCalls = db.prepare<[string, string, number, number], string>(POD_GRAPH_SQL.podCalls).pluck();
  const podCallsOfUid = db.prepare<[string, string, string, number, number], string>(POD_GRAPH_SQL.podCallsOfUid).pluck();
  const childIds = db.prepare<[string], { id: string }>(POD_GRAPH_SQL.childIds);
  const byIds = db.prepare<[string], string>(POD_GRAPH_SQL.byIds).pluck();
  const helpers = db.prepare<[string], unknown[]>(POD_GRAPH_SQL.helpers).raw(true);

  // One snapshot: a call finishing meanwhile cannot show up with another call's view of its children.
  const readGraph = db.transaction((namespace: string, name: string, scope: PodCallScope): PodCallGraph => {
    const since = scope.sinceUs ?? 0;
    const until = scope.untilUs ?? Number.MAX_SAFE_INTEGER;
    const json = scope.podUid === undefined ? podCalls.get(namespace, name, since, until) : podCallsOfUid.get(scope.podUid, namespace, name, since, until);
    const newest = summariesFromJson(json ?? '[]');
    // Oldest first: the one past the cap, if any, is the first.
    const truncated = newest.length > MAX_POD_CALLS;
    const calls = truncated ? newest.slice(1) : newest;
    const known = new Set(calls.map((c) => c.id));
    const delegated: StoredCallSummary[] = [];
    let level = calls.map((c) => c.id);
    for (let depth = 0; depth < MAX_DELEGATION_DEPTH && level.length > 0; depth++) {
      const next = childIds.all(JSON.stringify(level)).map((r) => r.id);
      const unseen = next.filter((id) => !known.has(id));
      for (const id of unseen) known.add(id);
      if (unseen.length > 0) delegated.push(...summariesFromJson(byIds.get(JSON.stringify(unseen)) ?? '[]'));
      // Only new calls can have children not asked for yet.
      level = unseen;
    }
    delegated.sort(byStartThenId);
    const byCall = new Map<string, StoredHelperSummary[]>();
    for (const row of helpers.all(JSON.stringify([...known]))) {
      const h = helperSummaryFromRaw(row);
      const list = byCall.get(h.callId);
      if (list) list.push(h);
      else byCall.set(h.callId, [h]);
    }
    return { calls, delegated, helpers: byCall, truncated };
  });

  return {
    podCallGraph: (namespace, name, scope = {}) => readGraph(namespace, name, scope),
  };
}
