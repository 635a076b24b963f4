/**
 * Rows as SQLite returns them → the stored shapes of types.ts. The SELECT
 * lists and their decoders are both generated from the column lists
 * (call-columns.ts), so the two cannot drift apart. Every statement reads
 * rows with `.raw(true)` (arrays in column order): better-sqlite3 builds
 * object rows one named property at a time from C++, which took twice as
 * long as reading the values; the generated decoder then builds one plain
 * literal per row.
 */

import type { CapturedStream, CniCall } from '../../collector/index.js';
import { CALL_TABLE, HELPER_TABLE, type AnyColumn } from './call-columns.js';
import { compileFunction, objectLiteral } from './compile-columns.js';
import type { StoredCall, StoredCallSummary, StoredHelper, StoredHelperSummary } from './types.js';

/** Lists read a stream's size, never its bytes: `length()` comes from the record header, so sizing a 4 MiB stdout costs nothing. */
const storedName = (c: AnyColumn): string => `${c.name}_stored`;

/** The columns a list reads, in the order of its SELECT and its raw rows. */
const summaryColumns = (table: readonly AnyColumn[]) => table.filter((c) => !c.detail);

/** The SELECT list of `columns`; in a summary, each stream's bytes as their length. */
function selectList(columns: readonly AnyColumn[], summary: boolean): string {
  return columns.map((c) => (summary && c.role === 'stream-bytes' ? `length(${c.name}) AS ${storedName(c)}` : c.name)).join(', ');
}

/** What a row of a summary SELECT is called in a subquery over it: each column's alias or name. */
const summaryNames = (table: readonly AnyColumn[]): string[] => summaryColumns(table).map((c) => (c.role === 'stream-bytes' ? storedName(c) : c.name));

/** A column's stored value → its field's value, as source text. */
function decodeExpr(c: AnyColumn, v: string): string {
  if (c.type.decode === 'json') return `JSON.parse(${v})`;
  if (c.type.decode === 'boolean') return c.type.notNull ? `${v} !== 0` : `boolOrNull(${v})`;
  return v;
}

const boolOrNull = (v: number | null): boolean | null => (v === null ? null : v !== 0);
type Redactions = Partial<Record<string, readonly string[]>>;
const redactionsOf = (json: string | null): Redactions => (json === null ? {} : (JSON.parse(json) as Redactions));
/** A stream with its bytes; `redactions` only when there were some, as the collector publishes it. */
const stream = (bytes: Buffer, total: number, truncated: number, redactions: readonly string[] | undefined): CapturedStream =>
  redactions === undefined ? { bytes, totalBytes: total, truncated: truncated !== 0 } : { bytes, totalBytes: total, truncated: truncated !== 0, redactions };

/**
 * The body of a decoder of raw rows `a` of `columns`: one literal with every
 * field in column order, then each stream (its sizes in a summary, its bytes
 * and redactions in full), then `extra` (e.g. a call's helpers).
 */
function decoderBody(columns: readonly AnyColumn[], summary: boolean, extra: ReadonlyArray<readonly [string, string]> = []): string {
  const at = (role: AnyColumn['role'], field: string) => `a[${columns.findIndex((c) => c.role === role && c.field === field)}]`;
  const fields: Array<readonly [string, string]> = [];
  const streams: string[] = [];
  let redactions = -1;
  columns.forEach((c, i) => {
    if (c.role === 'field') fields.push([c.field, decodeExpr(c, `a[${i}]`)]);
    else if (c.role === 'stream-total') streams.push(c.field);
    else if (c.role === 'redactions') redactions = i;
  });
  for (const s of streams) {
    const total = at('stream-total', s);
    const truncated = at('stream-truncated', s);
    const bytes = at('stream-bytes', s);
    const value = summary
      ? objectLiteral([['storedBytes', bytes], ['totalBytes', total], ['truncated', `${truncated} !== 0`]])
      : `stream(${bytes}, ${total}, ${truncated}, r.${s})`;
    fields.push([s, value]);
  }
  const prelude = redactions >= 0 ? `const r = redactionsOf(a[${redactions}]);\n` : '';
  return `${prelude}return ${objectLiteral([...fields, ...extra])};`;
}

const helpersForDecoders = { boolOrNull, redactionsOf, stream };

/** Everything of a call but the payloads, argv and env: what every list shows. */
export const SUMMARY_COLUMNS = selectList(summaryColumns(CALL_TABLE), true);
/** Every column of a call. */
export const FULL_COLUMNS = selectList(CALL_TABLE, false);
/** Every column of a helper (with what it printed). */
export const HELPER_SELECT_COLUMNS = selectList(HELPER_TABLE, false);
/** A helper without what it printed: its sizes, as for calls. */
export const HELPER_SUMMARY_COLUMNS = selectList(summaryColumns(HELPER_TABLE), true);

/** SUMMARY_COLUMNS by the names a subquery over them has. */
const SUMMARY_NAMES = summaryNames(CALL_TABLE);

/** A raw SUMMARY_COLUMNS row → its summary. */
export const summaryFromRaw: (a: readonly unknown[]) => StoredCallSummary = compileFunction(
  'summaryFromRaw',
  ['a'],
  decoderBody(summaryColumns(CALL_TABLE), true),
  helpersForDecoders,
);

/** A raw FULL_COLUMNS row and its helpers → the call. */
export const callFromRaw: (a: readonly unknown[], helpers: readonly StoredHelper[]) => StoredCall = compileFunction(
  'callFromRaw',
  ['a', 'helpers'],
  decoderBody(CALL_TABLE, false, [['helpers', 'helpers']]),
  helpersForDecoders,
);

/** A raw HELPER_SELECT_COLUMNS row → the helper. */
export const helperFromRaw: (a: readonly unknown[]) => StoredHelper = compileFunction('helperFromRaw', ['a'], decoderBody(HELPER_TABLE, false), helpersForDecoders);

/** A raw HELPER_SUMMARY_COLUMNS row → the helper, with sizes instead of bytes. */
export const helperSummaryFromRaw: (a: readonly unknown[]) => StoredHelperSummary = compileFunction(
  'helperSummaryFromRaw',
  ['a'],
  decoderBody(summaryColumns(HELPER_TABLE), true),
  helpersForDecoders,
);

/** The values of a SUMMARY_COLUMNS row for a call not read from the database: each column's encoder, a stream's bytes as their length. */
const summaryValuesOf: (call: CniCall) => unknown[] = compileFunction(
  'summaryValuesOf',
  ['c'],
  `return [${CALL_TABLE.flatMap((col, i) => (col.detail ? [] : [col.role === 'stream-bytes' ? `e${i}(c).length` : `e${i}(c)`])).join(', ')}];`,
  Object.fromEntries(CALL_TABLE.map((c, i) => [`e${i}`, c.encode])),
);

/**
 * The summary the store will hand out for `call` once it is written, without
 * writing it: the live tail shows calls as they happen in the very shape
 * (and through the very columns) the REST API later reads them back in.
 */
export const summaryOfCall = (call: CniCall): StoredCallSummary => summaryFromRaw(summaryValuesOf(call));

/** Summaries from a statement over SUMMARY_COLUMNS prepared with `.raw(true)`. */
export const summariesFromRaw = (rows: readonly unknown[][]): StoredCallSummary[] => rows.map(summaryFromRaw);

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
