/**
 * Findings from the calls alone: a runtime retrying a command that keeps
 * failing. Kubelet retries a sandbox's teardown until its DEL succeeds, so a
 * DEL that always fails loops for as long as the pod exists (the sandbox
 * can never go, its IP stays held); an ADD that always fails leaves the pod
 * in ContainerCreating, a new sandbox (new container id) per attempt.
 *
 * - `del-loop`: one container and interface, its top-level DEL failed at
 *   least `minFailures` times within the window and has not succeeded since.
 * - `add-loop`: one pod (namespace, name, UID) and interface, the same for ADD.
 *
 * A finding is resolved once the command succeeds, or once fewer than
 * `minFailures` failures are left in the window (the pod is gone, or the
 * runtime gave up). Failures are ok = 0: a non-zero exit, or a signal (a
 * runtime killing a plugin that timed out); calls still running or whose
 * end was never seen do not count.
 */

import type { Database } from 'better-sqlite3';
import { isoFromUs } from '../../lib/index.js';
import { createFindingsLog, type FindingFields } from './cache-findings.js';

export interface CallLoopOptions {
  /** How far back failures are counted. */
  readonly windowMs?: number;
  /** Failures, with no success after them, that make a loop. */
  readonly minFailures?: number;
}

export interface CallLoopDetector {
  /** Opens, refreshes and resolves the loop findings as of `nowMs`. */
  detect(nowMs: number): void;
}

export const DEFAULT_LOOP_WINDOW_MS = 60 * 60_000;
export const DEFAULT_LOOP_MIN_FAILURES = 3;

const TOP_LEVEL_FAILED = 'c.parent_id IS NULL AND c.is_version_probe = 0 AND c.ok = 0 AND c.started_at_us >= @sinceUs';
/** The error libcni would report: the CNI error's msg on stdout (it is JSON when the plugin follows the spec). */
const ERROR_MSG = "CASE WHEN json_valid(CAST(stdout AS TEXT)) THEN json_extract(CAST(stdout AS TEXT), '$.msg') END";

const FAILURE_COLUMNS = `id, plugin, container_id, ifname, pod_namespace, pod_name, pod_uid, exit_code, signal, ${ERROR_MSG} AS error_msg`;

/** The statements, exported for the query-plan tests. */
export const CALL_LOOP_SQL = {
  // Failed DELs of the window (calls_failed_by_command) with no successful DEL of the same interface after them.
  delLoops: `
    SELECT c.container_id, c.ifname, count(*) AS failures, min(c.started_at_us) AS first_us
    FROM calls c
    WHERE c.command = 'DEL' AND ${TOP_LEVEL_FAILED} AND c.container_id IS NOT NULL AND c.container_id != ''
      AND NOT EXISTS (SELECT 1 FROM calls s
        WHERE s.parent_id IS NULL AND s.container_id = c.container_id AND s.ifname IS c.ifname AND s.command = 'DEL'
          AND s.ok = 1 AND s.started_at_us > c.started_at_us)
    GROUP BY c.container_id, c.ifname HAVING count(*) >= @min`,
  // The same per pod: each retry is a new sandbox, so the pod (and interface) is what repeats.
  addLoops: `
    SELECT c.pod_namespace, c.pod_name, c.pod_uid, c.ifname, count(*) AS failures, min(c.started_at_us) AS first_us
    FROM calls c
    WHERE c.command = 'ADD' AND ${TOP_LEVEL_FAILED} AND c.pod_name IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM calls s
        WHERE s.parent_id IS NULL AND s.pod_namespace = c.pod_namespace AND s.pod_name = c.pod_name AND s.pod_uid IS c.pod_uid
          AND s.ifname IS c.ifname AND s.command = 'ADD' AND s.ok = 1 AND s.started_at_us > c.started_at_us)
    GROUP BY c.pod_namespace, c.pod_name, c.pod_uid, c.ifname HAVING count(*) >= @min`,
  // The newest failure of a loop, for its message (calls_top_level_by_container, calls_by_pod).
  lastDelFailure: `SELECT ${FAILURE_COLUMNS} FROM calls WHERE container_id = ? AND ifname IS ? AND command = 'DEL' AND parent_id IS NULL AND is_version_probe = 0 AND ok = 0
     ORDER BY started_at_us DESC LIMIT 1`,
  lastAddFailure: `SELECT ${FAILURE_COLUMNS} FROM calls WHERE pod_namespace = ? AND pod_name = ? AND pod_uid IS ? AND ifname IS ? AND command = 'ADD' AND parent_id IS NULL AND is_version_probe = 0 AND ok = 0
     ORDER BY started_at_us DESC LIMIT 1`,
} as const;

interface LoopRow {
  readonly failures: number;
  readonly first_us: number;
}

interface LastFailure {
  readonly id: string;
  readonly plugin: string;
  readonly container_id: string | null;
  readonly ifname: string | null;
  readonly pod_namespace: string | null;
  readonly pod_name: string | null;
  readonly pod_uid: string | null;
  readonly exit_code: number | null;
  readonly signal: number | null;
  readonly error_msg: unknown;
}

export function createCallLoopDetector(db: Database, opts: CallLoopOptions = {}): CallLoopDetector {
  const windowMs = opts.windowMs ?? DEFAULT_LOOP_WINDOW_MS;
  const minFailures = opts.minFailures ?? DEFAULT_LOOP_MIN_FAILURES;
  const findings = createFindingsLog(db);

  const delLoops = db.prepare<{ sinceUs: number; min: number }, LoopRow & { container_id: string; ifname: string | null }>(CALL_LOOP_SQL.delLoops);
  const addLoops = db.prepare<{ sinceUs: number; min: number }, LoopRow & { pod_namespace: string; pod_name: string; pod_uid: string | null; ifname: string | null }>(
    CALL_LOOP_SQL.addLoops,
  );
  const lastDelFailure = db.prepare<[string, string | null], LastFailure>(CALL_LOOP_SQL.lastDelFailure);
  const lastAddFailure = db.prepare<[string, string, string | null, string | null], LastFailure>(CALL_LOOP_SQL.lastAddFailure);

  // Opens (or refreshes) what was found and resolves the open findings of `kind` that were not.
  const reconcile = (kind: 'del-loop' | 'add-loop', found: ReadonlyMap<string, FindingFields>, nowMs: number) => {
    for (const [subject, fields] of found) findings.open(kind, subject, fields, nowMs);
    for (const subject of findings.openSubjects(kind)) if (!found.has(subject)) findings.resolve(kind, subject, nowMs);
  };

  const detect = db.transaction((nowMs: number) => {
    const params = { sinceUs: (nowMs - windowMs) * 1000, min: minFailures };

    const dels = new Map<string, FindingFields>();
    for (const row of delLoops.all(params)) {
      const last = lastDelFailure.get(row.container_id, row.ifname);
      if (!last) continue;
      dels.set(`${row.container_id}/${row.ifname ?? ''}`, {
        message:
          `DEL of container ${row.container_id} (${row.ifname ?? 'no ifname'})${podOf(last)} failed ${row.failures} times since ${isoFromUs(row.first_us)} and has not succeeded since: ` +
          `the runtime keeps retrying it, the sandbox cannot be removed and its address stays held. Last failure: call ${last.id}, ${failureOf(last)}`,
        containerId: row.container_id,
        callId: last.id,
        podNamespace: last.pod_namespace,
        podName: last.pod_name,
        count: row.failures,
      });
    }
    reconcile('del-loop', dels, nowMs);

    const adds = new Map<string, FindingFields>();
    for (const row of addLoops.all(params)) {
      const last = lastAddFailure.get(row.pod_namespace, row.pod_name, row.pod_uid, row.ifname);
      if (!last) continue;
      adds.set(`${row.pod_namespace}/${row.pod_name}/${row.pod_uid ?? ''}/${row.ifname ?? ''}`, {
        message:
          `ADD for pod ${row.pod_namespace}/${row.pod_name} (${row.ifname ?? 'no ifname'}) failed ${row.failures} times since ${isoFromUs(row.first_us)} and has not succeeded since: ` +
          `the pod stays in ContainerCreating while the runtime retries with a new sandbox each time. Last failure: call ${last.id}, ${failureOf(last)}`,
        containerId: last.container_id,
        callId: last.id,
        podNamespace: row.pod_namespace,
        podName: row.pod_name,
        count: row.failures,
      });
    }
    reconcile('add-loop', adds, nowMs);
  });

  return { detect: (nowMs) => void detect(nowMs) };
}

function podOf(c: LastFailure): string {
  return c.pod_namespace !== null && c.pod_name !== null ? ` for pod ${c.pod_namespace}/${c.pod_name}` : '';
}

/** A plugin's error can be any size; the finding quotes its start (the call has all of it). */
const MAX_ERROR_CHARS = 500;

function failureOf(c: LastFailure): string {
  const how = c.signal !== null ? `${c.plugin} killed by signal ${c.signal} (runtimes kill a plugin that times out)` : `${c.plugin} exited ${c.exit_code ?? '?'}`;
  if (typeof c.error_msg !== 'string' || c.error_msg === '') return how;
  return `${how}: ${c.error_msg.length > MAX_ERROR_CHARS ? `${c.error_msg.slice(0, MAX_ERROR_CHARS)}…` : c.error_msg}`;
}
