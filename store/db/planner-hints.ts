/**
 * Fixed planner statistics for the calls table. SQLite picks an index from
 * `sqlite_stat1`; left to itself it has none on a new file and, after the
 * `PRAGMA optimize` the store runs on close, sampled ones (analysis_limit):
 * on 1,000,000 calls those said ~2,000 calls per command where there are
 * ~250,000, and the planner walked the wrong index for `failed=true`.
 * The shape of a node's calls is known in advance, so the store writes
 * these hints itself on every writable open (a dozen rows) and plans stay
 * the same at any size; the query-plan tests pin them.
 *
 * Each value: rows in the index, then the average rows sharing each prefix
 * of its columns (SQLite's sqlite_stat1 format), for a node with N calls.
 */

import type { Database } from 'better-sqlite3';

/** The scale the hints describe; only ratios between the numbers steer the planner. */
const N = 1_000_000;

export const CALLS_PLANNER_HINTS: Readonly<Record<string, string>> = {
  sqlite_autoindex_calls_1: `${N} 1`,
  calls_by_started: `${N} 1 1`,
  // ~50 namespaces; a pod name holds its handful of calls (more when a name is reused).
  calls_by_pod: `${N} ${N / 50} 20 1 1`,
  calls_by_namespace: `${N} ${N / 50} 1 1`,
  calls_by_pod_uid: `${N} 10 1 1`,
  calls_by_container: `${N} 6 1 1`,
  // ADD, DEL, CHECK, VERSION and a few more.
  calls_by_command: `${N} ${N / 4} 1 1`,
  // ~2% of calls fail.
  calls_failed: `${N / 50} 1 1`,
  calls_failed_by_command: `${N / 50} ${N / 200} 1 1`,
  // A node runs a handful of plugins.
  calls_by_plugin: `${N} ${N / 5} 1 1 1 1`,
  // Durations in µs: nearly every value distinct.
  calls_by_duration: `${N} 2`,
  // About half the calls are delegated, one child per parent.
  calls_by_parent: `${N / 2} 1 1 1`,
  calls_running: '10 1 1',
  // Calls whose network is known (most, once stdin or a conf names it); a node has a handful of networks.
  calls_by_network: `${N / 2} ${N / 6} 1 1`,
  // Top-level STATUS calls kept whole (failing, slow, a change): a few thousand per network at most (the retention cap).
  calls_status_by_network: `${N / 100} ${N / 300} 1 1 1 1`,
};

/**
 * Replaces the calls table's statistics with the hints and makes this
 * connection plan with them. Indexes a build does not have are skipped.
 */
export function writePlannerHints(db: Database): void {
  const existing = new Set(
    db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'calls'")
      .all()
      .map((r) => r.name),
  );
  // Creates sqlite_stat1 when it does not exist yet (analysing sqlite_schema itself finds nothing to count).
  db.exec('ANALYZE sqlite_schema');
  const remove = db.prepare<[string]>("DELETE FROM sqlite_stat1 WHERE tbl = 'calls' AND idx = ?");
  const insert = db.prepare<[string, string]>("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('calls', ?, ?)");
  db.transaction(() => {
    for (const [idx, stat] of Object.entries(CALLS_PLANNER_HINTS)) {
      if (!existing.has(idx)) continue;
      remove.run(idx);
      insert.run(idx, stat);
    }
  })();
  // Statistics are read when the schema is loaded: reload it so this connection uses the hints.
  db.exec('ANALYZE sqlite_schema');
}
