/**
 * CniCall / HelperProcess → the values bound to the `calls` and `helpers`
 * INSERTs. The column lists and the row types are derived from one another,
 * so a column added to the SQL without a value (or the reverse) fails to
 * compile instead of silently binding NULL.
 */

import type { CapturedStream, CniCall, HelperProcess, ProcessOutcome } from '../collector/types.js';

/** What better-sqlite3 can bind (it refuses booleans and undefined). */
export type SqlValue = string | number | bigint | Buffer | null;

export const CALL_COLUMNS = [
  'id',
  'status',
  'incomplete_reason',
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
  'ended_at_us',
  'duration_us',
  'exit_code',
  'signal',
  'core_dumped',
  'ok',
  'capture_mode',
  'lost_records',
  'stdin_total',
  'stdin_truncated',
  'stdout_total',
  'stdout_truncated',
  'stderr_total',
  'stderr_truncated',
  'argv_json',
  'env_json',
  'stdin',
  'stdout',
  'stderr',
] as const;

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
] as const;

export type CallColumn = (typeof CALL_COLUMNS)[number];
export type CallRow = Record<CallColumn, SqlValue>;
export type HelperRow = Record<(typeof HELPER_COLUMNS)[number], SqlValue>;

/**
 * The columns a call's finish can change. Everything else comes from the
 * exec (the assembler's `CallState.base`) and is identical in the started
 * and finished snapshots. Updating only these keeps SQLite from rewriting
 * the pod, container, command, plugin, time and parent index entries of
 * every finished call (a measured ~20% of write time); if the collector
 * ever learns exec-time facts later, add their columns here.
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
] as const satisfies readonly CallColumn[];

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

export function callRow(call: CniCall): CallRow {
  const o = call.outcome;
  return {
    id: call.id,
    status: call.status,
    incomplete_reason: call.incompleteReason,
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
    ended_at_us: wholeUsOrNull(call.endedAtUs),
    duration_us: call.durationUs === null ? null : Math.round(call.durationUs),
    exit_code: o?.exitCode ?? null,
    signal: o?.signal ?? null,
    core_dumped: o === null ? null : bit(o.coreDumped),
    ok: okOf(o),
    capture_mode: call.captureMode,
    lost_records: bit(call.lostRecords),
    stdin_total: call.stdin.totalBytes,
    stdin_truncated: bit(call.stdin.truncated),
    stdout_total: call.stdout.totalBytes,
    stdout_truncated: bit(call.stdout.truncated),
    stderr_total: call.stderr.totalBytes,
    stderr_truncated: bit(call.stderr.truncated),
    argv_json: JSON.stringify(call.argv),
    env_json: JSON.stringify(call.env),
    stdin: bytesOf(call.stdin),
    stdout: bytesOf(call.stdout),
    stderr: bytesOf(call.stderr),
  };
}

/**
 * Positional values in CALL_COLUMNS order: better-sqlite3 binds an array
 * measurably faster than named parameters looked up on an object.
 */
export function callValues(call: CniCall): SqlValue[] {
  const row = callRow(call);
  return CALL_COLUMNS.map((c) => row[c]);
}

export function helperValues(callId: string, seq: number, h: HelperProcess): SqlValue[] {
  const row = helperRow(callId, seq, h);
  return HELPER_COLUMNS.map((c) => row[c]);
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
  };
}
