/**
 * Which calls a bundle keeps, put in temporary tables of the reading
 * connection for the table rules (bundle-tables.ts) to use: the calls that
 * started in the window (of the pods asked for, when pods were), the whole
 * tree of each call asked for (its ancestors and everything they delegated),
 * and every call delegated by one of those.
 */

import type { Database } from 'better-sqlite3';

export interface PodSelector {
  readonly namespace: string;
  readonly name: string;
  /** Narrows a reused name to one pod; null: every pod of that name. */
  readonly uid: string | null;
}

export interface RecordSelection {
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Only these pods' calls in the window (with what they delegated); none: every call in the window. */
  readonly pods: readonly PodSelector[];
  /** These calls' trees, whatever the window. */
  readonly calls: readonly string[];
}

export interface SelectionParams {
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly sinceUs: number;
  readonly untilUs: number;
  readonly scoped: 0 | 1;
}

export interface SelectionResult {
  readonly params: SelectionParams;
  /** Calls asked for that the record does not hold. */
  readonly missingCalls: readonly string[];
  readonly calls: number;
}

const TEMP_TABLES = [
  'CREATE TEMP TABLE bundle_pods (namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT)',
  'CREATE TEMP TABLE bundle_named (id TEXT PRIMARY KEY)',
  'CREATE TEMP TABLE bundle_roots (id TEXT PRIMARY KEY)',
  'CREATE TEMP TABLE bundle_calls (id TEXT PRIMARY KEY)',
  'CREATE TEMP TABLE bundle_containers (id TEXT PRIMARY KEY)',
];

const IN_WINDOW = 'started_at_us BETWEEN :sinceUs AND :untilUs';

/** Calls taken into the selection per statement, between which the event loop is let go. */
const SLICE_ROWS = 2_000;

/**
 * Fills the temporary tables; runs inside the caller's read transaction, so it sees the snapshot the copy
 * reads. In slices, `pace` between them: a week of a busy node's calls is seconds of work.
 */
export async function selectCalls(db: Database, selection: RecordSelection, pace: () => Promise<void>): Promise<SelectionResult> {
  db.pragma('temp_store = MEMORY');
  for (const sql of TEMP_TABLES) db.exec(sql);
  const window = { sinceUs: selection.sinceMs * 1000, untilUs: selection.untilMs * 1000 };
  const scoped = selection.pods.length > 0 || selection.calls.length > 0;
  const addPod = db.prepare<[string, string, string | null]>('INSERT INTO temp.bundle_pods (namespace, name, uid) VALUES (?, ?, ?)');
  for (const p of selection.pods) addPod.run(p.namespace, p.name, p.uid);
  const addNamed = db.prepare<[string]>('INSERT OR IGNORE INTO temp.bundle_named (id) VALUES (?)');
  for (const id of selection.calls) addNamed.run(id);

  if (!scoped) {
    // Keyset pages of the window (the calls_by_started index), one slice each.
    const page = db.prepare<{ sinceUs: number; untilUs: number; at: number; id: string }, { at: number; id: string }>(
      `SELECT started_at_us AS at, id FROM main.calls WHERE ${IN_WINDOW} AND (started_at_us > @at OR (started_at_us = @at AND id > @id))
       ORDER BY started_at_us, id LIMIT ${SLICE_ROWS}`,
    );
    const root = db.prepare<[string]>('INSERT OR IGNORE INTO temp.bundle_roots (id) VALUES (?)');
    for (let after = { at: -1, id: '' }; ; ) {
      const rows = page.all({ ...window, ...after });
      for (const r of rows) root.run(r.id);
      if (rows.length < SLICE_ROWS) break;
      after = rows.at(-1)!;
      await pace();
    }
  }
  if (selection.pods.length > 0) {
    db.prepare(
      `INSERT OR IGNORE INTO temp.bundle_roots SELECT c.id FROM main.calls c JOIN temp.bundle_pods p
         ON c.pod_namespace = p.namespace AND c.pod_name = p.name AND (p.uid IS NULL OR c.pod_uid = p.uid)
       WHERE c.${IN_WINDOW}`,
    ).run(window);
  }
  // A call asked for brings its ancestors, whose descendants below are then its whole tree.
  db.exec(
    `INSERT OR IGNORE INTO temp.bundle_roots
     WITH RECURSIVE up(id, parent_id) AS (
       SELECT id, parent_id FROM main.calls WHERE id IN (SELECT id FROM temp.bundle_named)
       UNION SELECT c.id, c.parent_id FROM main.calls c JOIN up ON c.id = up.parent_id)
     SELECT id FROM up`,
  );
  // Everything each root delegated, a slice of roots at a time.
  const descend = db.prepare<{ from: number; to: number }>(
    `INSERT OR IGNORE INTO temp.bundle_calls
     WITH RECURSIVE down(id) AS (
       SELECT id FROM temp.bundle_roots WHERE rowid BETWEEN @from AND @to
       UNION SELECT c.id FROM main.calls c JOIN down ON c.parent_id = down.id)
     SELECT id FROM down`,
  );
  const lastRoot = db.prepare<[], { n: number | null }>('SELECT max(rowid) AS n FROM temp.bundle_roots').get()!.n ?? 0;
  for (let from = 1; from <= lastRoot; from += SLICE_ROWS) {
    descend.run({ from, to: from + SLICE_ROWS - 1 });
    await pace();
  }
  // Their containers, and the span they cover, a slice of calls at a time.
  const containers = db.prepare<{ from: number; to: number }>(
    `INSERT OR IGNORE INTO temp.bundle_containers
     SELECT c.container_id FROM temp.bundle_calls b JOIN main.calls c ON c.id = b.id
     WHERE b.rowid BETWEEN @from AND @to AND c.container_id IS NOT NULL AND c.container_id <> ''`,
  );
  const spanOf = db.prepare<{ from: number; to: number }, { n: number; first: number | null; last: number | null }>(
    `SELECT count(*) AS n, min(c.started_at_us) AS first, max(coalesce(c.ended_at_us, c.started_at_us)) AS last
     FROM temp.bundle_calls b JOIN main.calls c ON c.id = b.id WHERE b.rowid BETWEEN @from AND @to`,
  );
  const span = { n: 0, first: null as number | null, last: null as number | null };
  const lastCall = db.prepare<[], { n: number | null }>('SELECT max(rowid) AS n FROM temp.bundle_calls').get()!.n ?? 0;
  for (let from = 1; from <= lastCall; from += SLICE_ROWS) {
    const range = { from, to: from + SLICE_ROWS - 1 };
    containers.run(range);
    const part = spanOf.get(range)!;
    span.n += part.n;
    if (part.first !== null) span.first = Math.min(span.first ?? Infinity, part.first);
    if (part.last !== null) span.last = Math.max(span.last ?? -Infinity, part.last);
    await pace();
  }

  const missingCalls = db
    .prepare<[], { id: string }>('SELECT id FROM temp.bundle_named WHERE id NOT IN (SELECT id FROM main.calls) ORDER BY id')
    .all()
    .map((r) => r.id);
  // The window widens to the calls kept (a call asked for may be older), so node-wide history covers them.
  const sinceMs = Math.min(selection.sinceMs, span.first === null ? Infinity : Math.floor(span.first / 1000));
  const untilMs = Math.max(selection.untilMs, span.last === null ? -Infinity : Math.ceil(span.last / 1000));
  return {
    params: { sinceMs, untilMs, sinceUs: sinceMs * 1000, untilUs: untilMs * 1000, scoped: scoped ? 1 : 0 },
    missingCalls,
    calls: span.n,
  };
}
