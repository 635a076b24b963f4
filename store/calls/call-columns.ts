/**
 * The one list of a call's columns, and of a helper's: for each, its SQL
 * declaration and how it is computed from what the collector published; it
 * reads back as the field named after it (FieldName). Everything else is derived
 * from these two lists: the INSERT, finish UPDATE and SELECT column lists,
 * the row and stored types (below and in types.ts), the row builders
 * (call-rows.ts) and the decoders (call-decode.ts). A new column is one line
 * here, plus its migration (migrations.ts; a unit test compares the migrated
 * table with this list).
 *
 * The lists are in INSERT order, which is not the table's own order (later
 * migrations append columns at the end of the table).
 */

import type { CaptureMode } from '../../bpf/index.js';
import { changeSummaryText, type LostRecordsCause, type CallStatus, type CapturedStream, type CniCall, type HelperProcess, type KernelChange, type KernelMessage, type ProcessOutcome } from '../../collector/index.js';
import { networkOfStdin } from './network-name.js';

/** What better-sqlite3 can bind (it refuses booleans and undefined). */
export type SqlValue = string | number | bigint | Buffer | null;

/**
 * A column's SQL declaration, the value it holds there (S) and the value it
 * reads back as (T). `decode`: how S becomes T (as it is, 0/1 → boolean,
 * JSON text → its value).
 */
export interface ColumnType<S extends SqlValue, T> {
  readonly sql: 'TEXT' | 'INTEGER' | 'BLOB';
  readonly notNull: boolean;
  readonly decode: 'as-is' | 'boolean' | 'json';
  /** Carry S and T for the derived types; never set. */
  readonly sqlValue?: S;
  readonly value?: T;
}

const text = <T extends string = string>(): ColumnType<string, T> => ({ sql: 'TEXT', notNull: true, decode: 'as-is' });
const textOrNull = <T extends string = string>(): ColumnType<T | null, T | null> => ({ sql: 'TEXT', notNull: false, decode: 'as-is' });
const int = (): ColumnType<number, number> => ({ sql: 'INTEGER', notNull: true, decode: 'as-is' });
const intOrNull = (): ColumnType<number | null, number | null> => ({ sql: 'INTEGER', notNull: false, decode: 'as-is' });
/** 0/1, read back as a boolean. */
const flag = (): ColumnType<number, boolean> => ({ sql: 'INTEGER', notNull: true, decode: 'boolean' });
/** 0/1 or NULL (unknown), read back as a boolean or null. */
const flagOrNull = (): ColumnType<number | null, boolean | null> => ({ sql: 'INTEGER', notNull: false, decode: 'boolean' });
const json = <T>(): ColumnType<string, T> => ({ sql: 'TEXT', notNull: true, decode: 'json' });
const blob = (): ColumnType<Buffer, Buffer> => ({ sql: 'BLOB', notNull: true, decode: 'as-is' });
const redactionsJson = (): ColumnType<string | null, null> => ({ sql: 'TEXT', notNull: false, decode: 'as-is' });

/**
 * What a column is to the stored shape: a field of its own, one of the three
 * parts of a captured stream (read back together as one field named after
 * the stream), or the pointers redaction replaced, per stream (read back
 * into each stream's `redactions`).
 */
export type ColumnRole = 'field' | 'stream-total' | 'stream-truncated' | 'stream-bytes' | 'redactions';

export interface Column<A extends unknown[], N extends string, F extends string, S extends SqlValue, T, R extends ColumnRole, D extends boolean> {
  readonly name: N;
  /** The stored shape's field (see FieldName), or the stream's name for a stream's parts. */
  readonly field: F;
  readonly type: ColumnType<S, T>;
  readonly role: R;
  /**
   * Read only with the whole call or helper (its page, a replay), never in
   * lists: what is large or needed by the detail view alone. A stream's bytes
   * are read in lists as their length (`length()` comes from the record
   * header, so sizing a 4 MiB stdout costs nothing).
   */
  readonly detail: D;
  /** The value bound for the row of `args` (a call; or a helper, its call id and its position). */
  readonly encode: (...args: A) => S;
}

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
/** A column's field in the stored shape: its name in camelCase, a JSON column's without `_json` (`pod_uid` → `podUid`, `argv_json` → `argv`). */
export type FieldName<N extends string> = Camel<N extends `${infer Json}_json` ? Json : N>;
const fieldName = <N extends string>(name: N): FieldName<N> => name.replace(/_json$/, '').replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as FieldName<N>;

/** Column constructors for rows built from `A`. */
function columnsOf<A extends unknown[]>() {
  return {
    field: <const N extends string, S extends SqlValue, T>(name: N, type: ColumnType<S, T>, encode: (...args: A) => S) =>
      ({ name, field: fieldName(name), type, role: 'field', detail: false, encode }) as Column<A, N, FieldName<N>, S, T, 'field', false>,
    detailField: <const N extends string, S extends SqlValue, T>(name: N, type: ColumnType<S, T>, encode: (...args: A) => S) =>
      ({ name, field: fieldName(name), type, role: 'field', detail: true, encode }) as Column<A, N, FieldName<N>, S, T, 'field', true>,
    /**
     * A stream's total size, truncated flag and bytes, in that order. `of`
     * takes the row's first argument only (the call or the helper): the
     * encoders stay plain one-argument functions, no rest parameters.
     */
    stream: <const F extends 'stdin' | 'stdout' | 'stderr'>(field: F, of: (row: A[0]) => CapturedStream) => {
      const encoder = <S extends SqlValue>(f: (row: A[0]) => S) => f as unknown as (...args: A) => S;
      return [
        { name: `${field}_total`, field, type: int(), role: 'stream-total', detail: false, encode: encoder((row) => of(row).totalBytes) },
        { name: `${field}_truncated`, field, type: flag(), role: 'stream-truncated', detail: false, encode: encoder((row) => bit(of(row).truncated)) },
        // A Buffer is bound as a BLOB byte for byte; never a string, which would re-encode non-UTF-8 bytes.
        { name: field, field, type: blob(), role: 'stream-bytes', detail: false, encode: encoder((row) => of(row).bytes) },
      ] as const;
    },
    redactions: (encode: (...args: A) => string | null) =>
      ({ name: 'redactions_json', field: 'redactions', type: redactionsJson(), role: 'redactions', detail: true, encode }) as Column<A, 'redactions_json', 'redactions', string | null, null, 'redactions', true>,
  };
}

const bit = (b: boolean): number => (b ? 1 : 0);
/**
 * Whole microseconds: the collector keeps the kernel's nanoseconds as a
 * fraction, which the STRICT INTEGER columns refuse. Floor, like the call id does.
 */
const wholeUs = (us: number): number => Math.floor(us);
const wholeUsOrNull = (us: number | null): number | null => (us === null ? null : Math.floor(us));
/** Unknown (still running, or the exit was never seen) is NULL, so `failed` filters only find real failures. */
const okOf = (o: ProcessOutcome | null): number | null => (o === null ? null : bit(o.exitCode === 0 && o.signal === null));
const coreDumpedOf = (o: ProcessOutcome | null): number | null => (o === null ? null : bit(o.coreDumped));

/** `{"stdin": [pointer…]}` for the streams redaction changed; NULL (the common case) when none. */
function redactionsOf(streams: Readonly<Record<string, CapturedStream>>): string | null {
  let out: Record<string, readonly string[]> | null = null;
  for (const [name, s] of Object.entries(streams)) {
    if (s.redactions === undefined) continue;
    (out ??= {})[name] = s.redactions;
  }
  return out === null ? null : JSON.stringify(out);
}

const call = columnsOf<[CniCall]>();

/** Known when the plugin is exec'd (the assembler's `CallState.base`): the same in the started and finished snapshots. */
export const EXEC_TABLE = [
  call.field('id', text(), (c) => c.id),
  call.field('command', textOrNull(), (c) => c.command),
  call.field('plugin', text(), (c) => c.plugin),
  call.field('path', text(), (c) => c.path),
  call.field('pid', int(), (c) => c.pid),
  call.field('ppid', int(), (c) => c.ppid),
  call.field('parent_id', textOrNull(), (c) => c.parentId),
  call.field('parent_pid', intOrNull(), (c) => c.parentProcess?.pid ?? null),
  call.field('parent_comm', textOrNull(), (c) => c.parentProcess?.comm ?? null),
  call.field('parent_exe', textOrNull(), (c) => c.parentProcess?.exe ?? null),
  call.field('container_id', textOrNull(), (c) => c.containerId),
  call.field('netns', textOrNull(), (c) => c.netns),
  call.field('ifname', textOrNull(), (c) => c.ifname),
  call.detailField('cni_args', textOrNull(), (c) => c.cniArgs),
  call.field('pod_namespace', textOrNull(), (c) => c.pod?.namespace ?? null),
  call.field('pod_name', textOrNull(), (c) => c.pod?.name ?? null),
  call.field('pod_uid', textOrNull(), (c) => c.pod?.uid ?? null),
  call.field('pod_infra_container_id', textOrNull(), (c) => c.pod?.infraContainerId ?? null),
  call.field('trace_parent', textOrNull(), (c) => c.traceParent),
  call.field('is_version_probe', flag(), (c) => bit(c.isVersionProbe)),
  // Whole microseconds since the Unix epoch (the collector's fraction is dropped).
  call.field('started_at_us', int(), (c) => wholeUs(c.startedAtUs)),
  call.field('capture_mode', text<CaptureMode>(), (c) => c.captureMode),
  call.detailField('argv_json', json<readonly string[]>(), (c) => JSON.stringify(c.argv)),
  call.detailField('env_json', json<Readonly<Record<string, string>>>(), (c) => JSON.stringify(c.env)),
  // The images the plugin process ran, in order (a wrapper's exec in place); the last plugin names the call.
  call.detailField('exec_chain_json', json<readonly string[]>(), (c) => JSON.stringify(c.execChain ?? [c.path])),
  call.field('env_truncated', flag(), (c) => bit(c.envTruncated ?? false)),
  call.field('path_truncated', flag(), (c) => bit(c.pathTruncated ?? false)),
  // Set after the fact, when the GC that ran this DEL first is recorded (store/network/gc-dels.ts).
  call.field('gc_driven', flag(), (c) => bit(c.gcDriven ?? false)),
] as const;

/**
 * The exec columns an exec in place can change (a wrapper exec'd the real
 * plugin after the call had started): a finish whose call ran more than one
 * image writes these too (see IDENTITY_CHANGED).
 */
export const IDENTITY_TABLE = EXEC_TABLE.filter(
  (c) => c.name !== 'id' && !c.name.startsWith('parent_') && c.name !== 'pid' && c.name !== 'ppid' && c.name !== 'started_at_us' && c.name !== 'gc_driven',
);

/** Whether a finished call's exec columns may differ from its started row. */
export const identityChanged = (c: CniCall): boolean => (c.execChain?.length ?? 1) > 1;

/**
 * What a finish can change. Updating only these keeps SQLite from
 * rewriting the pod, container, command, plugin, time and parent index
 * entries of every finished call. The exception, an exec in place that
 * renamed the call after it started, also writes IDENTITY_TABLE.
 */
export const FINISH_TABLE = [
  call.field('status', text<CallStatus>(), (c) => c.status),
  call.field('incomplete_reason', textOrNull(), (c) => c.incompleteReason),
  call.field('ended_at_us', intOrNull(), (c) => wholeUsOrNull(c.endedAtUs)),
  call.field('duration_us', intOrNull(), (c) => (c.durationUs === null ? null : Math.round(c.durationUs))),
  call.field('exit_code', intOrNull(), (c) => c.outcome?.exitCode ?? null),
  call.field('signal', intOrNull(), (c) => c.outcome?.signal ?? null),
  // Null when the call's end was never seen.
  call.field('core_dumped', flagOrNull(), (c) => coreDumpedOf(c.outcome)),
  // Exit 0 and no signal; null while running or when the outcome is unknown (incomplete).
  call.field('ok', flagOrNull(), (c) => okOf(c.outcome)),
  call.field('lost_records', flag(), (c) => bit(c.lostRecords)),
  // Why lost_records is set (collector/types.ts LOST_RECORDS_CAUSES); NULL when it is not, or for rows older than the cause.
  call.field('lost_records_cause', textOrNull<LostRecordsCause>(), (c) => c.lostRecordsCause),
  call.field('stdio_shared', flag(), (c) => bit(c.stdioShared)),
  call.field('uncaptured_io', int(), (c) => c.uncapturedIo),
  // Where the bytes a descendant wrote after the plugin exited begin in the stream; NULL when none.
  call.field('stdout_after_exit_offset', intOrNull(), (c) => c.stdoutAfterExitOffset ?? null),
  call.field('stderr_after_exit_offset', intOrNull(), (c) => c.stderrAfterExitOffset ?? null),
  // The store's edge names it (stdin, parent, conf by plugin type); a live call not through it: its stdin's name.
  // A finish column: stdin, and so the name, is known only at the end.
  call.field('network', textOrNull(), (c) => (c.network !== undefined ? c.network : networkOfStdin(c.stdin.bytes))),
  // What the call's tree changed in the kernel ('null': not captured, light mode) and the kernel's own messages (every mode).
  call.detailField('changes_json', json<readonly KernelChange[] | null>(), (c) => JSON.stringify(c.changes ?? null)),
  // Those changes in a few words for lists and the pod story (`+3 links, +2 addrs; 1 refused`); NULL when not captured.
  call.field('change_summary', textOrNull(), (c) => (c.changes == null ? null : changeSummaryText(c.changes))),
  call.field('kernel_messages_json', json<readonly KernelMessage[]>(), (c) => JSON.stringify(c.kernelMessages ?? [])),
  ...call.stream('stdin', (c) => c.stdin),
  ...call.stream('stdout', (c) => c.stdout),
  ...call.stream('stderr', (c) => c.stderr),
  call.redactions((c) =>
    c.stdin.redactions || c.stdout.redactions || c.stderr.redactions ? redactionsOf({ stdin: c.stdin, stdout: c.stdout, stderr: c.stderr }) : null,
  ),
] as const;

/** Every column of `calls`, in INSERT order. */
export const CALL_TABLE = [...EXEC_TABLE, ...FINISH_TABLE] as const;

const helper = columnsOf<[HelperProcess, string, number]>();

/** Every column of `helpers` but its rowid `id`, in INSERT order; a helper's row is built from it, its call's id and its position. */
export const HELPER_TABLE = [
  helper.field('call_id', text(), (_h, callId) => callId),
  // Order within its call, from 0.
  helper.field('seq', int(), (_h, _callId, seq) => seq),
  helper.field('pid', int(), (h) => h.pid),
  helper.field('ppid', int(), (h) => h.ppid),
  helper.field('path', text(), (h) => h.path),
  helper.field('started_at_us', int(), (h) => wholeUs(h.startedAtUs)),
  helper.field('ended_at_us', intOrNull(), (h) => wholeUsOrNull(h.endedAtUs)),
  helper.field('exit_code', intOrNull(), (h) => h.outcome?.exitCode ?? null),
  helper.field('signal', intOrNull(), (h) => h.outcome?.signal ?? null),
  helper.field('core_dumped', flagOrNull(), (h) => coreDumpedOf(h.outcome)),
  helper.field('argv_json', json<readonly string[]>(), (h) => JSON.stringify(h.argv)),
  ...helper.stream('stdout', (h) => h.stdout),
  ...helper.stream('stderr', (h) => h.stderr),
  helper.redactions((h) => (h.stdout.redactions || h.stderr.redactions ? redactionsOf({ stdout: h.stdout, stderr: h.stderr }) : null)),
] as const;

// ------------------------------------------------------------------ derived types

/** Any column of either list. */
export type AnyColumn = Column<never, string, string, SqlValue, unknown, ColumnRole, boolean>;

type ValueOf<C> = C extends { readonly type: ColumnType<SqlValue, infer T> } ? T : never;
type SqlValueOf<C> = C extends { readonly type: ColumnType<infer S, unknown> } ? S : never;

/** A row of `C` by column name, as bound and as SQLite returns it. */
export type RowOf<C extends readonly AnyColumn[]> = { [K in C[number] as K['name']]: SqlValueOf<K> };

/** How much of a stream was kept, without the bytes (for lists). */
export interface StreamSize {
  /** Bytes stored: what `getCall` would return in `bytes`. */
  readonly storedBytes: number;
  /** Bytes the process moved in all. */
  readonly totalBytes: number;
  readonly truncated: boolean;
}

/** The stored shape of `C`'s own fields, in lists (`detail` false) or in full. */
type FieldsOf<C extends AnyColumn, Detail extends boolean> = {
  readonly [K in Extract<C, { readonly role: 'field'; readonly detail: Detail | false }> as K['field']]: ValueOf<K>;
};
/** Each stream of `C` as one field: its sizes in lists, its bytes in full. */
type StreamsOf<C extends AnyColumn, S> = { readonly [K in Extract<C, { readonly role: 'stream-total' }> as K['field']]: S };

/** A row of `C` as the store hands it out in lists: fields, and streams as sizes. */
export type SummaryOf<C extends AnyColumn> = FieldsOf<C, false> & StreamsOf<C, StreamSize>;
/** A row of `C` in full: every field, and streams with their bytes (and what redaction replaced in them). */
export type FullOf<C extends AnyColumn> = FieldsOf<C, true> & StreamsOf<C, CapturedStream>;

export type CallColumnSpec = (typeof CALL_TABLE)[number];
export type HelperColumnSpec = (typeof HELPER_TABLE)[number];
