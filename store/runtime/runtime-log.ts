/**
 * The runtime's tables (store/db/runtime-schema.ts): its readiness
 * transitions, the newest MAX_RUNTIME_TRANSITIONS kept, and the sandboxes it
 * listed, a row rewritten only when the runtime reports it differently.
 */

import type { Database } from 'better-sqlite3';
import type { RuntimeSandbox } from '../../collector/index.js';
import { REACHABLE, type ConditionState, type RuntimeTransition, type StoredSandbox } from './types.js';
import type { NewTransition } from './readiness-rules.js';
import type { ConfChange } from './runtime-text.js';

/** Years of a healthy node's history, weeks of a flapping one. */
export const MAX_RUNTIME_TRANSITIONS = 1000;
/** How far back a conf change counts as "just before" the runtime said not ready, and the slack after it. */
const CONF_CHANGE_BEFORE_MS = 10 * 60_000;
const CONF_CHANGE_SLACK_MS = 5_000;

interface TransitionRow {
  id: number;
  at_ms: number;
  endpoint: string | null;
  type: string;
  status: number;
  reason: string;
  message: string;
}

interface SandboxRow {
  id: string;
  namespace: string;
  name: string;
  uid: string;
  attempt: number;
  state: 'ready' | 'notready';
  created_at_ms: number;
  ip: string | null;
  additional_ips_json: string;
  labels_json: string;
  annotations_json: string;
  runtime_handler: string;
  first_seen_ms: number;
  seen_at_ms: number;
  gone_at_ms: number | null;
}

const toTransition = (r: TransitionRow): RuntimeTransition => ({ id: r.id, atMs: r.at_ms, endpoint: r.endpoint, type: r.type, status: r.status === 1, reason: r.reason, message: r.message });

const toSandbox = (r: SandboxRow): StoredSandbox => ({
  id: r.id,
  namespace: r.namespace,
  name: r.name,
  uid: r.uid,
  attempt: r.attempt,
  state: r.state,
  createdAtMs: r.created_at_ms,
  ip: r.ip,
  additionalIps: JSON.parse(r.additional_ips_json) as string[],
  labels: JSON.parse(r.labels_json) as Record<string, string>,
  annotations: JSON.parse(r.annotations_json) as Record<string, string>,
  runtimeHandler: r.runtime_handler,
  firstSeenMs: r.first_seen_ms,
  seenAtMs: r.seen_at_ms,
  goneAtMs: r.gone_at_ms,
});

export interface RuntimeLog {
  /** Newest first. */
  transitions(limit: number): RuntimeTransition[];
  addTransitions(ts: readonly NewTransition[]): RuntimeTransition[];
  /** Each condition as its latest transition left it, and whether the runtime answered last (null: never asked). */
  lastKnown(): { conditions: Map<string, ConditionState>; reachable: boolean | null };
  /** The latest transition of each type (a condition, or Reachable), oldest type first. */
  latestPerType(): RuntimeTransition[];
  /** Open leaked-attachment findings by network. */
  openLeaksByNetwork(): Map<string | null, number>;
  /** Sandboxes still listed at the last poll. */
  liveSandboxes(): StoredSandbox[];
  saveSandbox(s: RuntimeSandbox, firstSeenMs: number, seenAtMs: number): void;
  markGone(id: string, seenAtMs: number, goneAtMs: number): void;
  sandboxesByIds(ids: readonly string[]): Map<string, StoredSandbox>;
  sandboxesOfPod(namespace: string, name: string): StoredSandbox[];
  /** The conf dir change recorded last at or before `atMs` (within ten minutes), if any. */
  confChangeBefore(atMs: number): ConfChange | null;
}

export function createRuntimeLog(db: Database): RuntimeLog {
  const newest = db.prepare<[number], TransitionRow>('SELECT * FROM runtime_transitions ORDER BY at_ms DESC, id DESC LIMIT ?');
  const insert = db.prepare<[number, string | null, string, number, string, string]>('INSERT INTO runtime_transitions (at_ms, endpoint, type, status, reason, message) VALUES (?, ?, ?, ?, ?, ?)');
  const trim = db.prepare<[number]>('DELETE FROM runtime_transitions WHERE id NOT IN (SELECT id FROM runtime_transitions ORDER BY at_ms DESC, id DESC LIMIT ?)');
  // The latest row of each type (runtime_transitions_by_type).
  const latestPerType = db.prepare<[], TransitionRow>(
    'SELECT t.* FROM runtime_transitions t WHERE t.id = (SELECT u.id FROM runtime_transitions u WHERE u.type = t.type ORDER BY u.at_ms DESC, u.id DESC LIMIT 1) ORDER BY t.id',
  );
  const live = db.prepare<[], SandboxRow>('SELECT * FROM runtime_sandboxes WHERE gone_at_ms IS NULL');
  const openLeaks = db.prepare<[], { network: string | null; n: number }>(
    "SELECT network, count(*) AS n FROM cache_findings WHERE kind = 'leaked-attachment' AND resolved_at_ms IS NULL GROUP BY network",
  );
  const upsert = db.prepare(`
    INSERT INTO runtime_sandboxes (id, namespace, name, uid, attempt, state, created_at_ms, ip, additional_ips_json, labels_json, annotations_json, runtime_handler, first_seen_ms, seen_at_ms, gone_at_ms)
    VALUES (@id, @namespace, @name, @uid, @attempt, @state, @createdAtMs, @ip, @additionalIps, @labels, @annotations, @runtimeHandler, @firstSeenMs, @seenAtMs, NULL)
    ON CONFLICT (id) DO UPDATE SET namespace = excluded.namespace, name = excluded.name, uid = excluded.uid, attempt = excluded.attempt, state = excluded.state,
      created_at_ms = excluded.created_at_ms, ip = excluded.ip, additional_ips_json = excluded.additional_ips_json, labels_json = excluded.labels_json,
      annotations_json = excluded.annotations_json, runtime_handler = excluded.runtime_handler, seen_at_ms = excluded.seen_at_ms, gone_at_ms = NULL`);
  const gone = db.prepare<[number, number, string]>('UPDATE runtime_sandboxes SET seen_at_ms = ?, gone_at_ms = ? WHERE id = ?');
  const byIds = db.prepare<[string], SandboxRow>('SELECT * FROM runtime_sandboxes WHERE id IN (SELECT value FROM json_each(?))');
  const ofPod = db.prepare<[string, string], SandboxRow>('SELECT * FROM runtime_sandboxes WHERE namespace = ? AND name = ? ORDER BY created_at_ms, id');
  const confChange = db.prepare<{ from: number; to: number }, { id: number; path: string; at: number; change: 'added' | 'changed' | 'removed'; previous: number | null }>(`
    SELECT * FROM (
      SELECT v.id, v.path, v.valid_from_ms AS at,
        CASE WHEN p.id IS NULL THEN 'added' ELSE 'changed' END AS change, p.id AS previous
      FROM conf_versions v LEFT JOIN conf_versions p ON p.id = (SELECT max(q.id) FROM conf_versions q WHERE q.path = v.path AND q.id < v.id)
      WHERE v.valid_from_ms BETWEEN @from AND @to
      UNION ALL
      SELECT v.id, v.path, v.removed_at_ms AS at, 'removed' AS change, NULL AS previous
      FROM conf_versions v WHERE v.removed_at_ms BETWEEN @from AND @to
    ) ORDER BY at DESC, id DESC LIMIT 1`);

  const addTransitions = db.transaction((ts: readonly NewTransition[]): RuntimeTransition[] => {
    const out = ts.map((t) => ({ ...t, id: Number(insert.run(t.atMs, t.endpoint, t.type, t.status ? 1 : 0, t.reason, t.message).lastInsertRowid) }));
    if (out.length > 0) trim.run(MAX_RUNTIME_TRANSITIONS);
    return out;
  });

  return {
    transitions: (limit) => newest.all(limit).map(toTransition),
    addTransitions: (ts) => (ts.length === 0 ? [] : addTransitions(ts)),
    lastKnown() {
      const conditions = new Map<string, ConditionState>();
      let reachable: boolean | null = null;
      for (const t of latestPerType.all().map(toTransition)) {
        if (t.type === REACHABLE) reachable = t.status;
        else conditions.set(t.type, { type: t.type, status: t.status, reason: t.reason, message: t.message, sinceMs: t.atMs });
      }
      return { conditions, reachable };
    },
    latestPerType: () => latestPerType.all().map(toTransition),
    openLeaksByNetwork: () => new Map(openLeaks.all().map((r) => [r.network, r.n] as const)),
    liveSandboxes: () => live.all().map(toSandbox),
    saveSandbox(s, firstSeenMs, seenAtMs) {
      upsert.run({
        id: s.id,
        namespace: s.namespace,
        name: s.name,
        uid: s.uid,
        attempt: s.attempt,
        state: s.state,
        createdAtMs: s.createdAtMs,
        ip: s.ip,
        additionalIps: JSON.stringify(s.additionalIps),
        labels: JSON.stringify(s.labels),
        annotations: JSON.stringify(s.annotations),
        runtimeHandler: s.runtimeHandler,
        firstSeenMs,
        seenAtMs,
      });
    },
    markGone: (id, seenAtMs, goneAtMs) => void gone.run(seenAtMs, goneAtMs, id),
    sandboxesByIds: (ids) => new Map(ids.length === 0 ? [] : byIds.all(JSON.stringify(ids)).map((r) => [r.id, toSandbox(r)] as const)),
    sandboxesOfPod: (namespace, name) => ofPod.all(namespace, name).map(toSandbox),
    confChangeBefore(atMs) {
      const r = confChange.get({ from: atMs - CONF_CHANGE_BEFORE_MS, to: atMs + CONF_CHANGE_SLACK_MS });
      return r ? { path: r.path, change: r.change, atMs: r.at, versionId: r.id, previousId: r.previous } : null;
    },
  };
}
