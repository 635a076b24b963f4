/**
 * The deletes behind retention, each one small: a batch is one short
 * transaction bounded in rows and in time, so the daemon's other writes (and
 * the event loop they run on) wait milliseconds, never the whole clean-up.
 *
 * Calls go as whole trees: a top-level call (or one whose parent is already
 * gone) with every call it delegated to, and their helpers through ON DELETE
 * CASCADE (the payload blobs are columns of those rows), so no child, helper
 * or blob is ever left without its call. A tree with any call still running
 * is kept whole: its calls are in flight and the tail and the API show them.
 * Rows simply disappear; readers page by (started_at_us, id) keysets, which
 * stay valid when rows before or after the cursor are gone.
 *
 * STATUS heartbeats can be chosen apart (retention-policy.ts): the size
 * limit deletes them before other calls, and each network keeps only its
 * newest; a STATUS call a readiness transition names (the timeline's link)
 * is told apart through the transitions' call id index.
 */

import type { Database } from 'better-sqlite3';
import type { SizeCallPass } from './retention-policy.js';

/** Rows deleted, by table. Helpers go with their calls. */
export interface RetentionCounts {
  calls: number;
  helpers: number;
  tracerEvents: number;
  cacheEntries: number;
  ipHistory: number;
  cacheFindings: number;
  confVersions: number;
  callBinaries: number;
  pluginBinaries: number;
  runtimeSandboxes: number;
}

export type HistoryTable = 'tracerEvents' | 'cacheEntries' | 'ipHistory' | 'cacheFindings' | 'confVersions' | 'callBinaries' | 'pluginBinaries' | 'runtimeSandboxes';

// Binary versions after the links to them, so a version whose calls just went goes in the same run.
export const HISTORY_TABLES: readonly HistoryTable[] = ['tracerEvents', 'cacheEntries', 'ipHistory', 'cacheFindings', 'confVersions', 'callBinaries', 'pluginBinaries', 'runtimeSandboxes'];

export function zeroCounts(): RetentionCounts {
  return { calls: 0, helpers: 0, tracerEvents: 0, cacheEntries: 0, ipHistory: 0, cacheFindings: 0, confVersions: 0, callBinaries: 0, pluginBinaries: 0, runtimeSandboxes: 0 };
}

export function addCounts(into: RetentionCounts, more: Partial<RetentionCounts>): void {
  for (const k of Object.keys(more) as (keyof RetentionCounts)[]) into[k] += more[k] ?? 0;
}

/** Where a pass over the calls got to: the last root it looked at, oldest first. */
export interface CallPosition {
  readonly startedAtUs: number;
  readonly id: string;
}

export interface CallBatch {
  readonly calls: number;
  readonly helpers: number;
  readonly position: CallPosition | null;
  /** No older root is left to look at below the cutoff. */
  readonly exhausted: boolean;
}

export interface BatchLimits {
  readonly maxRows: number;
  readonly budgetMs: number;
}

/** A network with more top-level STATUS calls than it keeps: the newest of those past the cap. */
export interface StatusOverflow {
  /** null: the network is not known. */
  readonly network: string | null;
  readonly through: CallPosition;
}

export interface Pruner {
  /**
   * Deletes the oldest call trees whose root started before `cutoffUs`, after `after`:
   * every tree ('calls'), or only STATUS trees that no readiness transition names ('status') or that one does.
   */
  deleteCallTrees(cutoffUs: number, after: CallPosition | null, limits: BatchLimits, pass?: SizeCallPass): CallBatch;
  /** The networks with more than `keep` top-level STATUS calls, each with the newest call past its `keep`. */
  statusOverflow(keep: number): StatusOverflow[];
  /** Deletes a network's oldest top-level STATUS trees up to `through`, after `after`, but those a transition names. */
  deleteStatusTreesThrough(network: string | null, through: CallPosition, after: CallPosition | null, limits: BatchLimits): CallBatch;
  /** Deletes up to `maxRows` of the oldest closed history rows that ended before `cutoffMs`. */
  deleteHistory(table: HistoryTable, cutoffMs: number, maxRows: number): number;
  /** When the oldest call still stored started (µs), or null when none is. */
  oldestCallStartUs(): number | null;
}

/** "No cutoff": bigger than any timestamp, still an integer SQLite compares exactly. */
export const NO_CUTOFF = Number.MAX_SAFE_INTEGER;

// Roots: calls with no parent row (top-level, or orphaned by an earlier
// drop). Children are skipped here and deleted with their root, which always
// started before them.
const IS_ROOT = '(c.parent_id IS NULL OR NOT EXISTS (SELECT 1 FROM calls p WHERE p.id = c.parent_id))';
// A call the readiness timeline links to (cni_readiness_transitions_by_call).
const IN_TIMELINE = 'EXISTS (SELECT 1 FROM cni_readiness_transitions t WHERE t.call_id = c.id)';

/** The statements behind the passes and the STATUS cap; the query-plan test pins the indexes they walk. */
export const RETENTION_CALL_SQL = {
  // Oldest first on calls_by_started.
  roots: `
SELECT c.id, c.started_at_us FROM calls c
WHERE c.started_at_us < ? AND (c.started_at_us, c.id) > (?, ?) AND ${IS_ROOT}
ORDER BY c.started_at_us, c.id
LIMIT ?`,
  // Oldest first on calls_by_command: STATUS rows only (their delegates are skipped as children).
  statusRoots: `
SELECT c.id, c.started_at_us FROM calls c
WHERE c.command = 'STATUS' AND c.started_at_us < ? AND (c.started_at_us, c.id) > (?, ?) AND ${IS_ROOT} AND NOT ${IN_TIMELINE}
ORDER BY c.started_at_us, c.id
LIMIT ?`,
  timelineStatusRoots: `
SELECT c.id, c.started_at_us FROM calls c
WHERE c.command = 'STATUS' AND c.started_at_us < ? AND (c.started_at_us, c.id) > (?, ?) AND ${IS_ROOT} AND ${IN_TIMELINE}
ORDER BY c.started_at_us, c.id
LIMIT ?`,
  // The rest on calls_status_by_network (top-level STATUS calls only), which stays as small as the cap keeps it.
  // Networks one index seek each (DISTINCT would read every entry): the first, then the next after one.
  firstStatusNetwork: "SELECT network FROM calls WHERE command = 'STATUS' AND parent_id IS NULL AND network IS NOT NULL ORDER BY network LIMIT 1",
  nextStatusNetwork: "SELECT network FROM calls WHERE command = 'STATUS' AND parent_id IS NULL AND network > ? ORDER BY network LIMIT 1",
  // The newest call past a network's first `keep`, newest first: none when it has no more.
  statusOverflow: `
SELECT started_at_us, id FROM calls
WHERE command = 'STATUS' AND parent_id IS NULL AND network IS ?
ORDER BY started_at_us DESC, id DESC
LIMIT 1 OFFSET ?`,
  statusThrough: `
SELECT c.id, c.started_at_us FROM calls c
WHERE c.command = 'STATUS' AND c.parent_id IS NULL AND c.network IS ?
  AND (c.started_at_us, c.id) <= (?, ?) AND (c.started_at_us, c.id) > (?, ?) AND NOT ${IN_TIMELINE}
ORDER BY c.started_at_us, c.id
LIMIT ?`,
} as const;

// UNION, not UNION ALL: ends even if damaged rows ever formed a parent cycle.
const TREE = 'WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT c.id FROM calls c JOIN tree t ON c.parent_id = t.id)';
const TREE_INFO = `${TREE}
SELECT count(*) AS calls,
       coalesce(sum(status = 'running'), 0) AS running,
       (SELECT count(*) FROM helpers h WHERE h.call_id IN tree) AS helpers
FROM calls WHERE id IN tree`;
const DELETE_TREE = `${TREE} DELETE FROM calls WHERE id IN tree`;

// Closed history only: a live cache entry, an address still held and an open
// finding describe the node now, whatever their age.
const HISTORY_SQL: Record<HistoryTable, string> = {
  // at_us is in µs: the bound is multiplied in SQL so callers pass ms everywhere.
  tracerEvents: 'DELETE FROM tracer_events WHERE id IN (SELECT id FROM tracer_events WHERE at_us < ? * 1000 ORDER BY at_us LIMIT ?)',
  cacheEntries: `DELETE FROM cache_entries WHERE id IN (
    SELECT id FROM cache_entries
    WHERE (superseded_at_ms IS NOT NULL OR removed_at_ms IS NOT NULL) AND coalesce(superseded_at_ms, removed_at_ms) < ?
    ORDER BY coalesce(superseded_at_ms, removed_at_ms) LIMIT ?)`,
  ipHistory: 'DELETE FROM ip_history WHERE id IN (SELECT id FROM ip_history WHERE to_ms IS NOT NULL AND to_ms < ? ORDER BY to_ms LIMIT ?)',
  cacheFindings: 'DELETE FROM cache_findings WHERE id IN (SELECT id FROM cache_findings WHERE resolved_at_ms IS NOT NULL AND resolved_at_ms < ? ORDER BY resolved_at_ms LIMIT ?)',
  // A file's current version describes the node now: only replaced or removed versions go.
  confVersions: `DELETE FROM conf_versions WHERE id IN (
    SELECT id FROM conf_versions
    WHERE (superseded_at_ms IS NOT NULL OR removed_at_ms IS NOT NULL) AND coalesce(superseded_at_ms, removed_at_ms) < ?
    ORDER BY coalesce(superseded_at_ms, removed_at_ms) LIMIT ?)`,
  // The links go with their calls: the cutoff is the age limit or the oldest call kept.
  callBinaries: 'DELETE FROM call_binaries WHERE call_id IN (SELECT call_id FROM call_binaries WHERE started_at_us < ? * 1000 ORDER BY started_at_us LIMIT ?)',
  pluginBinaries: `DELETE FROM plugin_binaries WHERE id IN (
    SELECT b.id FROM plugin_binaries b WHERE b.last_seen_ms < ? AND NOT EXISTS (SELECT 1 FROM call_binaries cb WHERE cb.binary_id = b.id)
    ORDER BY b.last_seen_ms LIMIT ?)`,
  // A sandbox the runtime still lists describes the node now: only those gone go.
  runtimeSandboxes: 'DELETE FROM runtime_sandboxes WHERE id IN (SELECT id FROM runtime_sandboxes WHERE gone_at_ms IS NOT NULL AND gone_at_ms < ? ORDER BY gone_at_ms LIMIT ?)',
};

interface TreeInfo {
  calls: number;
  running: number;
  helpers: number;
}

interface Root {
  id: string;
  started_at_us: number;
}

type RootsStatement = (cutoffUs: number, afterUs: number, afterId: string, limit: number) => Root[];

export function createPruner(db: Database, nowMs: () => number = () => performance.now()): Pruner {
  const rootsOf = (sql: string): RootsStatement => {
    const stmt = db.prepare<[number, number, string, number], Root>(sql);
    return (...args) => stmt.all(...args);
  };
  const roots: Record<SizeCallPass, RootsStatement> = {
    calls: rootsOf(RETENTION_CALL_SQL.roots),
    status: rootsOf(RETENTION_CALL_SQL.statusRoots),
    'status-in-timeline': rootsOf(RETENTION_CALL_SQL.timelineStatusRoots),
  };
  const firstStatusNetwork = db.prepare<[], { network: string }>(RETENTION_CALL_SQL.firstStatusNetwork);
  const nextStatusNetwork = db.prepare<[string], { network: string }>(RETENTION_CALL_SQL.nextStatusNetwork);
  const statusOverflow = db.prepare<[string | null, number], Root>(RETENTION_CALL_SQL.statusOverflow);
  const statusThrough = db.prepare<[string | null, number, string, number, string, number], Root>(RETENTION_CALL_SQL.statusThrough);
  const treeInfo = db.prepare<[string], TreeInfo>(TREE_INFO);
  const deleteTree = db.prepare<[string]>(DELETE_TREE);
  const oldest = db.prepare<[], { started_at_us: number }>('SELECT started_at_us FROM calls ORDER BY started_at_us LIMIT 1');
  const history = Object.fromEntries(HISTORY_TABLES.map((t) => [t, db.prepare<[number, number]>(HISTORY_SQL[t])])) as Record<
    HistoryTable,
    ReturnType<typeof db.prepare<[number, number]>>
  >;

  /** Deletes the trees of the roots `candidates` reads (oldest first, at most `maxRows` of them), in one transaction. */
  const treeBatch = db.transaction((candidates: (limit: number) => Root[], after: CallPosition | null, limits: BatchLimits): CallBatch => {
    const started = nowMs();
    // A root is at least one row: never ask for more roots than rows allowed.
    const found = candidates(limits.maxRows);
    let calls = 0;
    let helpers = 0;
    let position = after;
    let looked = 0;
    for (const root of found) {
      if (calls >= limits.maxRows || nowMs() - started >= limits.budgetMs) break;
      looked++;
      position = { startedAtUs: root.started_at_us, id: root.id };
      const info = treeInfo.get(root.id);
      if (!info || info.running > 0) continue;
      deleteTree.run(root.id);
      calls += info.calls;
      helpers += info.helpers;
    }
    return { calls, helpers, position, exhausted: looked === found.length && found.length < limits.maxRows };
  });

  return {
    deleteCallTrees: (cutoffUs, after, limits, pass = 'calls') =>
      treeBatch.immediate((limit) => roots[pass](cutoffUs, after?.startedAtUs ?? -1, after?.id ?? '', limit), after, limits),
    statusOverflow(keep) {
      const out: StatusOverflow[] = [];
      const check = (network: string | null) => {
        const past = statusOverflow.get(network, keep);
        if (past) out.push({ network, through: { startedAtUs: past.started_at_us, id: past.id } });
      };
      check(null);
      for (let row = firstStatusNetwork.get(); row; row = nextStatusNetwork.get(row.network)) check(row.network);
      return out;
    },
    deleteStatusTreesThrough: (network, through, after, limits) =>
      treeBatch.immediate((limit) => statusThrough.all(network, through.startedAtUs, through.id, after?.startedAtUs ?? -1, after?.id ?? '', limit), after, limits),
    deleteHistory: (table, cutoffMs, maxRows) => history[table].run(cutoffMs, maxRows).changes,
    oldestCallStartUs: () => oldest.get()?.started_at_us ?? null,
  };
}
