/**
 * CniCall / HelperProcess → the values bound to the `calls` and `helpers`
 * statements. The column lists and the row types are derived from one
 * another, so a column added to the SQL without a value (or the reverse)
 * fails to compile instead of silently binding NULL.
 */

import type { CapturedStream, CniCall, HelperProcess, ProcessOutcome } from '../../collector/index.js';

/** What better-sqlite3 can bind (it refuses booleans and undefined). */
export type SqlValue = string | number | bigint | Buffer | null;

/** Known when the plugin is exec'd (the assembler's `CallState.base`): the same in the started and finished snapshots. */
export const EXEC_COLUMNS = [
  'id',
  'command',
  'plugin',
  'path',
  'pid',
  'ppid',
  'parent_id',
  'parent_pid',
  'parent_comm',
  'parent_exe',
  'container_id',
  'netns',
  'ifname',
  'cni_args',
  'pod_namespace',
  'pod_name',
  'pod_uid',
  'pod_infra_container_id',
  'trace_parent',
  'is_version_probe',
  'started_at_us',
  'capture_mode',
  'argv_json',
  'env_json',
] as const;

/**
 * What a finish can change. Updating only these keeps SQLite from
 * rewriting the pod, container, command, plugin, time and parent index
 * entries of every finished call; if the collector ever learns exec-time
 * facts later, move their columns here.
 */
export const FINISH_COLUMNS = [
  'status',
  'incomplete_reason',
  'ended_at_us',
  'duration_us',
  'exit_code',
  'signal',
  'core_dumped',
  'ok',
  'lost_records',
  'stdin_total',
  'stdin_truncated',
  'stdout_total',
  'stdout_truncated',
  'stderr_total',
  'stderr_truncated',
  'stdin',
  'stdout',
  'stderr',
  'redactions_json',
] as const;

/** The INSERT's column list (the table's own order differs: see migrations.ts). */
export const CALL_COLUMNS = [...EXEC_COLUMNS, ...FINISH_COLUMNS] as const;

export const HELPER_COLUMNS = [
  'call_id',
  'seq',
  'pid',
  'ppid',
  'path',
  'started_at_us',
  'ended_at_us',
  'exit_code',
  'signal',
  'core_dumped',
  'stdout_total',
  'stdout_truncated',
  'stderr_total',
  'stderr_truncated',
  'argv_json',
  'stdout',
  'stderr',
  'redactions_json',
] as const;

export type CallColumn = (typeof CALL_COLUMNS)[number];
type ExecRow = Record<(typeof EXEC_COLUMNS)[number], SqlValue>;
type FinishRow = Record<(typeof FINISH_COLUMNS)[number], SqlValue>;
export type CallRow = ExecRow & FinishRow;
export type HelperRow = Record<(typeof HELPER_COLUMNS)[number], SqlValue>;

const bit = (b: boolean): number => (b ? 1 : 0);

/**
 * Whole microseconds: the collector keeps the kernel's nanoseconds as a
 * fraction, which the STRICT INTEGER columns refuse. Floor, like the call id does.
 */
const wholeUs = (us: number): number => Math.floor(us);
const wholeUsOrNull = (us: number | null): number | null => (us === null ? null : Math.floor(us));

/** Unknown (still running, or the exit was never seen) is NULL, so `failed` filters only find real failures. */
function okOf(outcome: ProcessOutcome | null): number | null {
  if (outcome === null) return null;
  return bit(outcome.exitCode === 0 && outcome.signal === null);
}

/** A Buffer is bound as a BLOB byte for byte; never a string, which would re-encode non-UTF-8 bytes. */
const bytesOf = (s: CapturedStream): Buffer => s.bytes;

/** `{"stdin": [pointer…]}` for the streams redaction changed; NULL (the common case) when none. */
function redactionsOf(streams: Readonly<Record<string, CapturedStream>>): string | null {
  let out: Record<string, readonly string[]> | null = null;
  for (const [name, s] of Object.entries(streams)) {
    if (s.redactions === undefined) continue;
    (out ??= {})[name] = s.redactions;
  }
  return out === null ? null : JSON.stringify(out);
}

function execRow(call: CniCall): ExecRow {
  return {
    id: call.id,
    command: call.command,
    plugin: call.plugin,
    path: call.path,
    pid: call.pid,
    ppid: call.ppid,
    parent_id: call.parentId,
    parent_pid: call.parentProcess?.pid ?? null,
    parent_comm: call.parentProcess?.comm ?? null,
    parent_exe: call.parentProcess?.exe ?? null,
    container_id: call.containerId,
    netns: call.netns,
    ifname: call.ifname,
    cni_args: call.cniArgs,
    pod_namespace: call.pod?.namespace ?? null,
    pod_name: call.pod?.name ?? null,
    pod_uid: call.pod?.uid ?? null,
    pod_infra_container_id: call.pod?.infraContainerId ?? null,
    trace_parent: call.traceParent,
    is_version_probe: bit(call.isVersionProbe),
    started_at_us: wholeUs(call.startedAtUs),
    capture_mode: call.captureMode,
    argv_json: JSON.stringify(call.argv),
    env_json: JSON.stringify(call.env),
  };
}

function finishRow(call: CniCall): FinishRow {
  const o = call.outcome;
  return {
    status: call.status,
    incomplete_reason: call.incompleteReason,
    ended_at_us: wholeUsOrNull(call.endedAtUs),
    duration_us: call.durationUs === null ? null : Math.round(call.durationUs),
    exit_code: o?.exitCode ?? null,
    signal: o?.signal ?? null,
    core_dumped: o === null ? null : bit(o.coreDumped),
    ok: okOf(o),
    lost_records: bit(call.lostRecords),
    stdin_total: call.stdin.totalBytes,
    stdin_truncated: bit(call.stdin.truncated),
    stdout_total: call.stdout.totalBytes,
    stdout_truncated: bit(call.stdout.truncated),
    stderr_total: call.stderr.totalBytes,
    stderr_truncated: bit(call.stderr.truncated),
    stdin: bytesOf(call.stdin),
    stdout: bytesOf(call.stdout),
    stderr: bytesOf(call.stderr),
    redactions_json: call.stdin.redactions || call.stdout.redactions || call.stderr.redactions ? redactionsOf({ stdin: call.stdin, stdout: call.stdout, stderr: call.stderr }) : null,
  };
}

/** The row by column name, for tests and debugging; the write path uses callValues. */
export function callRow(call: CniCall): CallRow {
  return { ...execRow(call), ...finishRow(call) };
}

/**
 * Positional values in CALL_COLUMNS order: better-sqlite3 binds an array
 * measurably faster than named parameters looked up on an object, and
 * Object.values on a literal beats picking each column by name (a
 * megamorphic load per column). That relies on the literals listing their
 * keys in column-list order, which the store's unit tests check.
 */
export function callValues(call: CniCall): SqlValue[] {
  // Not Object.values(callRow(call)): spreading two literals into a third
  // makes V8 rebuild its hidden class on every call, which halved throughput.
  const values: SqlValue[] = Object.values(execRow(call));
  for (const v of Object.values(finishRow(call))) values.push(v);
  return values;
}

/** FINISH_COLUMNS' values, then the id for the WHERE. */
export function finishValues(call: CniCall): SqlValue[] {
  const values: SqlValue[] = Object.values(finishRow(call));
  values.push(call.id);
  return values;
}

export function helperValues(callId: string, seq: number, h: HelperProcess): SqlValue[] {
  return Object.values(helperRow(callId, seq, h));
}

export function helperRow(callId: string, seq: number, h: HelperProcess): HelperRow {
  const o = h.outcome;
  return {
    call_id: callId,
    seq,
    pid: h.pid,
    ppid: h.ppid,
    path: h.path,
    started_at_us: wholeUs(h.startedAtUs),
    ended_at_us: wholeUsOrNull(h.endedAtUs),
    exit_code: o?.exitCode ?? null,
    signal: o?.signal ?? null,
    core_dumped: o === null ? null : bit(o.coreDumped),
    stdout_total: h.stdout.totalBytes,
    stdout_truncated: bit(h.stdout.truncated),
    stderr_total: h.stderr.totalBytes,
    stderr_truncated: bit(h.stderr.truncated),
    argv_json: JSON.stringify(h.argv),
    stdout: bytesOf(h.stdout),
    stderr: bytesOf(h.stderr),
    redactions_json: h.stdout.redactions || h.stderr.redactions ? redactionsOf({ stdout: h.stdout, stderr: h.stderr }) : null,
  };
}
