/**
 * Rows as SQLite returns them → the camelCase types of store/calls/types.ts.
 * The SELECT lists live here too, next to the code that reads their
 * aliases, so the two cannot drift apart.
 */

import type { CallStatus, CapturedStream } from '../../collector/index.js';
import type { CaptureMode } from '../../bpf/index.js';
import type { StoredCall, StoredCallSummary, StoredHelper, StoredHelperSummary, StreamSize } from './types.js';

/**
 * Everything but the payloads. `length()` of a BLOB is read from the record
 * header, so sizing a 4 MiB stdout costs nothing here.
 */
export const SUMMARY_COLUMNS = `id, status, incomplete_reason, command, plugin, path, pid, ppid,
  parent_id, parent_pid, parent_comm, parent_exe, container_id, netns, ifname,
  pod_namespace, pod_name, pod_uid, pod_infra_container_id, trace_parent, is_version_probe,
  started_at_us, ended_at_us, duration_us, exit_code, signal, core_dumped, ok, capture_mode, lost_records,
  stdin_total, stdin_truncated, stdout_total, stdout_truncated, stderr_total, stderr_truncated,
  length(stdin) AS stdin_stored, length(stdout) AS stdout_stored, length(stderr) AS stderr_stored`;

/**
 * A SUMMARY_COLUMNS row read with `.raw(true)` (an array in column order)
 * → the object form. better-sqlite3 builds object rows one named property
 * at a time from C++, which took twice as long as reading the values;
 * a plain literal here is cheap. Keep in the order of SUMMARY_COLUMNS
 * (a store test compares both forms on the same rows).
 */
export function summaryRowFromRaw(a: readonly unknown[]) {
  return {
    id: a[0] as string,
    status: a[1] as CallStatus,
    incomplete_reason: a[2] as string | null,
    command: a[3] as string | null,
    plugin: a[4] as string,
    path: a[5] as string,
    pid: a[6] as number,
    ppid: a[7] as number,
    parent_id: a[8] as string | null,
    parent_pid: a[9] as number | null,
    parent_comm: a[10] as string | null,
    parent_exe: a[11] as string | null,
    container_id: a[12] as string | null,
    netns: a[13] as string | null,
    ifname: a[14] as string | null,
    pod_namespace: a[15] as string | null,
    pod_name: a[16] as string | null,
    pod_uid: a[17] as string | null,
    pod_infra_container_id: a[18] as string | null,
    trace_parent: a[19] as string | null,
    is_version_probe: a[20] as number,
    started_at_us: a[21] as number,
    ended_at_us: a[22] as number | null,
    duration_us: a[23] as number | null,
    exit_code: a[24] as number | null,
    signal: a[25] as number | null,
    core_dumped: a[26] as number | null,
    ok: a[27] as number | null,
    capture_mode: a[28] as CaptureMode,
    lost_records: a[29] as number,
    stdin_total: a[30] as number,
    stdin_truncated: a[31] as number,
    stdout_total: a[32] as number,
    stdout_truncated: a[33] as number,
    stderr_total: a[34] as number,
    stderr_truncated: a[35] as number,
    stdin_stored: a[36] as number,
    stdout_stored: a[37] as number,
    stderr_stored: a[38] as number,
  };
}

/** Summaries from a statement over SUMMARY_COLUMNS prepared with `.raw(true)`. */
export const summariesFromRaw = (rows: readonly unknown[][]): StoredCallSummary[] => rows.map((r) => toSummary(summaryRowFromRaw(r)));

/** What a row of SUMMARY_COLUMNS is called in a subquery over it: each column's alias or name. */
const SUMMARY_NAMES = SUMMARY_COLUMNS.split(',').map((c) => c.trim().replace(/^.* AS /, ''));

/**
 * A whole set of summaries as one JSON text: `inner` is a SELECT of
 * SUMMARY_COLUMNS, the result one row holding a JSON array of row arrays
 * (in SUMMARY_COLUMNS order, as `.raw(true)` gives them), in no particular
 * order: summariesFromJson sorts them. For sets of hundreds of rows
 * scattered over the file (a pod's calls): better-sqlite3 makes every
 * column value a JS value through V8's API, ~40 per row, and one JSON.parse
 * of the same values was ~30% faster (bench/README.md, "Pod story").
 * Integers stay exact: no column holds one past 2^53. The aggregate has no
 * ORDER BY because SQLite sorts the rows' JSON texts in a temporary B-tree
 * for it, a quarter of the statement's time for a pod's 260 calls; sorting
 * the decoded summaries costs next to nothing.
 */
export const summariesAsJsonSql = (inner: string): string => `SELECT json_group_array(json_array(${SUMMARY_NAMES.join(', ')})) FROM (${inner})`;

/** Oldest first, then by id: the order of a pod's calls, and of every list of them the store hands out oldest first. */
export const byStartThenId = (a: StoredCallSummary, b: StoredCallSummary): number =>
  a.startedAtUs - b.startedAtUs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Summaries from the one value a summariesAsJsonSql statement returns, oldest first. */
export const summariesFromJson = (json: string): StoredCallSummary[] => summariesFromRaw(JSON.parse(json) as unknown[][]).sort(byStartThenId);

export const FULL_COLUMNS = `${SUMMARY_COLUMNS}, cni_args, argv_json, env_json, stdin, stdout, stderr, redactions_json`;

export const HELPER_SELECT_COLUMNS = `seq, pid, ppid, path, started_at_us, ended_at_us, exit_code, signal, core_dumped,
  stdout_total, stdout_truncated, stderr_total, stderr_truncated, argv_json, stdout, stderr, redactions_json`;

/** A helper without what it printed: its sizes come from the record header, as for calls. */
export const HELPER_SUMMARY_COLUMNS = `seq, pid, ppid, path, started_at_us, ended_at_us, exit_code, signal, core_dumped,
  stdout_total, stdout_truncated, stderr_total, stderr_truncated, argv_json,
  length(stdout) AS stdout_stored, length(stderr) AS stderr_stored`;

/** A SUMMARY_COLUMNS row by column name: what summaryRowFromRaw builds, its one list of the columns. */
export type SummaryRow = ReturnType<typeof summaryRowFromRaw>;

export interface FullRow extends SummaryRow {
  cni_args: string | null;
  argv_json: string;
  env_json: string;
  stdin: Buffer;
  stdout: Buffer;
  stderr: Buffer;
  redactions_json: string | null;
}

export interface HelperSelectRow {
  seq: number;
  pid: number;
  ppid: number;
  path: string;
  started_at_us: number;
  ended_at_us: number | null;
  exit_code: number | null;
  signal: number | null;
  core_dumped: number | null;
  stdout_total: number;
  stdout_truncated: number;
  stderr_total: number;
  stderr_truncated: number;
  argv_json: string;
  stdout: Buffer;
  stderr: Buffer;
  redactions_json: string | null;
}

export interface HelperSummaryRow extends Omit<HelperSelectRow, 'stdout' | 'stderr'> {
  call_id: string;
  stdout_stored: number;
  stderr_stored: number;
}

const boolOrNull = (v: number | null): boolean | null => (v === null ? null : v !== 0);
const size = (stored: number, total: number, truncated: number): StreamSize => ({ storedBytes: stored, totalBytes: total, truncated: truncated !== 0 });
type Redactions = Partial<Record<'stdin' | 'stdout' | 'stderr', readonly string[]>>;
const redactionsOf = (json: string | null): Redactions => (json === null ? {} : (JSON.parse(json) as Redactions));
const stream = (bytes: Buffer, total: number, truncated: number, redactions?: readonly string[]): CapturedStream =>
  redactions === undefined ? { bytes, totalBytes: total, truncated: truncated !== 0 } : { bytes, totalBytes: total, truncated: truncated !== 0, redactions };

type CallFields<S> = Omit<StoredCallSummary, 'stdin' | 'stdout' | 'stderr'> & { stdin: S; stdout: S; stderr: S };

/**
 * Every column of a call, with its streams as given. One literal with all
 * the keys, never `{ ...fields, stdin, … }`: V8 (Node 20) copies a spread
 * of this many properties on a slow path, and the copies it makes are slow
 * to read too, which made decoding and presenting a page of calls several
 * times slower than the query (bench/results/api-latency.md).
 */
function callFields<S>(r: SummaryRow, stdin: S, stdout: S, stderr: S): CallFields<S> {
  return {
    id: r.id,
    status: r.status,
    incompleteReason: r.incomplete_reason,
    command: r.command,
    plugin: r.plugin,
    path: r.path,
    pid: r.pid,
    ppid: r.ppid,
    parentId: r.parent_id,
    parentPid: r.parent_pid,
    parentComm: r.parent_comm,
    parentExe: r.parent_exe,
    containerId: r.container_id,
    netns: r.netns,
    ifname: r.ifname,
    podNamespace: r.pod_namespace,
    podName: r.pod_name,
    podUid: r.pod_uid,
    podInfraContainerId: r.pod_infra_container_id,
    traceParent: r.trace_parent,
    isVersionProbe: r.is_version_probe !== 0,
    startedAtUs: r.started_at_us,
    endedAtUs: r.ended_at_us,
    durationUs: r.duration_us,
    exitCode: r.exit_code,
    signal: r.signal,
    coreDumped: boolOrNull(r.core_dumped),
    ok: boolOrNull(r.ok),
    captureMode: r.capture_mode,
    lostRecords: r.lost_records !== 0,
    stdin,
    stdout,
    stderr,
  };
}

export function toSummary(r: SummaryRow): StoredCallSummary {
  return callFields(
    r,
    size(r.stdin_stored, r.stdin_total, r.stdin_truncated),
    size(r.stdout_stored, r.stdout_total, r.stdout_truncated),
    size(r.stderr_stored, r.stderr_total, r.stderr_truncated),
  );
}

type HelperFields<S> = Omit<StoredHelper, 'stdout' | 'stderr'> & { stdout: S; stderr: S };

/** A helper's columns with its streams as given: one literal, for the reason callFields gives. */
function helperFields<S>(r: Omit<HelperSelectRow, 'stdout' | 'stderr' | 'redactions_json'>, stdout: S, stderr: S): HelperFields<S> {
  return {
    seq: r.seq,
    pid: r.pid,
    ppid: r.ppid,
    path: r.path,
    argv: JSON.parse(r.argv_json) as string[],
    startedAtUs: r.started_at_us,
    endedAtUs: r.ended_at_us,
    exitCode: r.exit_code,
    signal: r.signal,
    coreDumped: boolOrNull(r.core_dumped),
    stdout,
    stderr,
  };
}

export function toHelper(r: HelperSelectRow): StoredHelper {
  const redacted = redactionsOf(r.redactions_json);
  return helperFields(
    r,
    stream(r.stdout, r.stdout_total, r.stdout_truncated, redacted.stdout),
    stream(r.stderr, r.stderr_total, r.stderr_truncated, redacted.stderr),
  );
}

export function toHelperSummary(r: HelperSummaryRow): StoredHelperSummary {
  return helperFields(r, size(r.stdout_stored, r.stdout_total, r.stdout_truncated), size(r.stderr_stored, r.stderr_total, r.stderr_truncated));
}

export function toStoredCall(r: FullRow, helpers: readonly HelperSelectRow[]): StoredCall {
  const redacted = redactionsOf(r.redactions_json);
  const fields = callFields(
    r,
    stream(r.stdin, r.stdin_total, r.stdin_truncated, redacted.stdin),
    stream(r.stdout, r.stdout_total, r.stdout_truncated, redacted.stdout),
    stream(r.stderr, r.stderr_total, r.stderr_truncated, redacted.stderr),
  );
  return Object.assign(fields, {
    cniArgs: r.cni_args,
    argv: JSON.parse(r.argv_json) as string[],
    env: JSON.parse(r.env_json) as Record<string, string>,
    helpers: helpers.map(toHelper),
  });
}
