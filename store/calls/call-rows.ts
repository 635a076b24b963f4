/**
 * CniCall / HelperProcess → the values bound to the `calls` and `helpers`
 * statements, built by code generated from the column lists
 * (call-columns.ts): an array literal in column order for the statements,
 * an object literal for tests and debugging.
 */

import type { CniCall, HelperProcess } from '../../collector/index.js';
import { CALL_TABLE, FINISH_TABLE, HELPER_TABLE, IDENTITY_TABLE, type AnyColumn, type CallColumnSpec, type RowOf, type SqlValue } from './call-columns.js';
import { compileFunction, objectLiteral } from './compile-columns.js';

export type { SqlValue } from './call-columns.js';

export type CallColumn = CallColumnSpec['name'];
export type CallRow = RowOf<typeof CALL_TABLE>;
export type HelperRow = RowOf<typeof HELPER_TABLE>;

/** The INSERT's column list (the table's own order differs: see call-columns.ts). */
export const CALL_COLUMNS: readonly CallColumn[] = CALL_TABLE.map((c) => c.name);
/** What a finish updates (see FINISH_TABLE). */
export const FINISH_COLUMNS: readonly CallColumn[] = FINISH_TABLE.map((c) => c.name);
/** What a finish also updates when an exec in place renamed the call (see IDENTITY_TABLE). */
export const IDENTITY_COLUMNS: readonly CallColumn[] = IDENTITY_TABLE.map((c) => c.name);
export const HELPER_COLUMNS: readonly (keyof HelperRow)[] = HELPER_TABLE.map((c) => c.name);

/** Each column's encoder under a name the generated code calls it by: e0, e1… */
const encoders = (table: readonly AnyColumn[]) => Object.fromEntries(table.map((c, i) => [`e${i}`, c.encode]));
const calls = (table: readonly AnyColumn[], args: string) => table.map((_, i) => `e${i}(${args})`);

/**
 * Positional values in CALL_COLUMNS order: better-sqlite3 binds an array
 * measurably faster than named parameters looked up on an object.
 */
export const callValues: (call: CniCall) => SqlValue[] = compileFunction('callValues', ['c'], `return [${calls(CALL_TABLE, 'c').join(', ')}];`, encoders(CALL_TABLE));

/** FINISH_COLUMNS' values, then the id for the WHERE. */
export const finishValues: (call: CniCall) => SqlValue[] = compileFunction('finishValues', ['c'], `return [${calls(FINISH_TABLE, 'c').join(', ')}, c.id];`, encoders(FINISH_TABLE));

/** IDENTITY_COLUMNS' values, then the id for the WHERE. */
export const identityValues: (call: CniCall) => SqlValue[] = compileFunction('identityValues', ['c'], `return [${calls(IDENTITY_TABLE, 'c').join(', ')}, c.id];`, encoders(IDENTITY_TABLE));

export const helperValues: (callId: string, seq: number, h: HelperProcess) => SqlValue[] = compileFunction(
  'helperValues',
  ['callId', 'seq', 'h'],
  `return [${calls(HELPER_TABLE, 'h, callId, seq').join(', ')}];`,
  encoders(HELPER_TABLE),
);

/** The row by column name, for tests and debugging; the write path uses callValues. */
export const callRow: (call: CniCall) => CallRow = compileFunction(
  'callRow',
  ['c'],
  `return ${objectLiteral(CALL_TABLE.map((col, i) => [col.name, `e${i}(c)`]))};`,
  encoders(CALL_TABLE),
);

export const helperRow: (callId: string, seq: number, h: HelperProcess) => HelperRow = compileFunction(
  'helperRow',
  ['callId', 'seq', 'h'],
  `return ${objectLiteral(HELPER_TABLE.map((col, i) => [col.name, `e${i}(h, callId, seq)`]))};`,
  encoders(HELPER_TABLE),
);
