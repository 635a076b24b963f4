/**
 * A bundle's record: the rows a selection keeps, copied from the daemon's
 * database into a new file of the same schema (every table the source has,
 * its schema version and application id; its indexes are rebuilt when the
 * bundle is opened, see restore-indexes.ts), as one
 * consistent snapshot while the daemon goes on writing. The source is opened
 * read-only and read in one transaction (WAL: the daemon's writes go on and
 * are not seen); rows are copied in slices with the event loop let go
 * between them, so a daemon making a bundle keeps reading its tracer.
 */

import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { APPLICATION_ID, latestVersion, StoreError, toStoreError } from '../db/index.js';
import { BUNDLE_TABLES, type TableRule } from './bundle-tables.js';
import { selectCalls, type RecordSelection, type SelectionParams } from './bundle-selection.js';

/** Whose payloads a bundle keeps: those of rows started at or after `keepFromUs`; null: none. */
export interface PayloadChoice {
  readonly keepFromUs: number | null;
}

export const ALL_PAYLOADS: PayloadChoice = { keepFromUs: 0 };
export const NO_PAYLOADS: PayloadChoice = { keepFromUs: null };

export interface SnapshotSummary {
  readonly schemaVersion: number;
  /** The window the node-wide history covers: the one asked for, widened to the calls kept. */
  readonly window: { readonly sinceMs: number; readonly untilMs: number };
  readonly missingCalls: readonly string[];
  /** Rows copied, per table (every table of the schema, 0 included). */
  readonly rows: Readonly<Record<string, number>>;
  /** Calls (and helpers) whose payloads were left out although they had some. */
  readonly payloadsLeftOut: number;
}

export interface SnapshotOptions {
  readonly source: string;
  readonly target: string;
  /** What to keep; null: every row (a snapshot copied again, its payloads cut: it has no indexes to select with). */
  readonly selection: RecordSelection | null;
  readonly payloads: PayloadChoice;
  /** How long a slice of copying may hold the event loop (ms). */
  readonly sliceMs?: number;
}

const PAGE_SIZE_BYTES = 16 * 1024;
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Opens a database file read-only, refusing what is not a cnirec record this build can read. */
export function openRecordReadOnly(file: string): Database {
  if (!existsSync(file)) throw new StoreError('not-a-database', file, `There is no cnirec database at ${file}: pass the daemon's --db (CNIREC_DB).`);
  let db: Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 5_000 });
    db.pragma('schema_version');
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    // Read-only, a permission problem is one of reading (the file, or its -wal and -shm beside it).
    if (/^(SQLITE_CANTOPEN|SQLITE_PERM|SQLITE_READONLY|EACCES|EPERM)/.test(code)) {
      throw new StoreError('not-writable', file, `Cannot read the database ${file}: permission denied (it and its -wal and -shm files are root's, 0600): run as root, as the daemon does.`, { cause: err });
    }
    throw toStoreError(err, file, 'read');
  }
  try {
    const appId = db.pragma('application_id', { simple: true }) as number;
    if (appId !== APPLICATION_ID) throw new StoreError('not-a-database', file, `The file ${file} is not a cnirec database.`);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > latestVersion()) {
      throw new StoreError('schema-too-new', file, `The database ${file} was written by a newer cnirec (schema ${version}, this build knows ${latestVersion()}): use that cnirec's bundle command.`);
    }
    return db;
  } catch (err) {
    db.close();
    throw toStoreError(err, file, 'read');
  }
}

export async function snapshotRecord(opts: SnapshotOptions): Promise<SnapshotSummary> {
  const src = openRecordReadOnly(opts.source);
  let dst: Database | null = null;
  try {
    dst = new BetterSqlite3(opts.target);
    dst.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
    dst.pragma('auto_vacuum = INCREMENTAL');
    // A private file made in one go: nothing to recover from, so no journal and no fsync.
    dst.pragma('journal_mode = OFF');
    dst.pragma('synchronous = OFF');
    src.exec('BEGIN');
    try {
      return await copy(src, dst, opts);
    } finally {
      src.exec('COMMIT');
    }
  } catch (err) {
    throw toStoreError(err, opts.source, 'make a bundle of');
  } finally {
    src.close();
    dst?.close();
  }
}

async function copy(src: Database, dst: Database, opts: SnapshotOptions): Promise<SnapshotSummary> {
  const pace = pacer(opts.sliceMs ?? 15);
  const selected = opts.selection === null ? EVERYTHING : await selectCalls(src, opts.selection, pace);
  const params = { ...selected.params, keepFromUs: opts.payloads.keepFromUs ?? Number.MAX_SAFE_INTEGER };
  const schemaVersion = src.pragma('user_version', { simple: true }) as number;
  const schema = src
    .prepare<[], { type: string; name: string; sql: string }>("SELECT type, name, sql FROM main.sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
    .all();
  const tables = schema.filter((s) => s.type === 'table');
  dst.pragma(`application_id = ${APPLICATION_ID}`);
  dst.pragma(`user_version = ${schemaVersion}`);
  dst.exec('BEGIN');
  for (const t of tables) dst.exec(t.sql);
  const rows: Record<string, number> = {};
  let payloadsLeftOut = 0;
  for (const t of tables) {
    const rule = BUNDLE_TABLES[t.name];
    const copied = await copyTable(src, dst, t.name, opts.selection === null && rule ? { ...rule, rows: '1' } : rule, params, pace);
    rows[t.name] = copied.rows;
    payloadsLeftOut += copied.payloadsLeftOut;
  }
  copySequences(src, dst);
  // Indexes are left out: they are half a record's compressed size and all rebuilt from its rows, which
  // `cnirec open` does (restoreIndexes). Triggers and views, if a schema ever has them, come along.
  for (const s of schema) if (s.type !== 'table' && s.type !== 'index') dst.exec(s.sql);
  dst.exec('COMMIT');
  return { schemaVersion, window: { sinceMs: params.sinceMs, untilMs: params.untilMs }, missingCalls: selected.missingCalls, rows, payloadsLeftOut };
}

type Params = SelectionParams & { keepFromUs: number };

/** A selection of every row (the window is the whole of time). */
const EVERYTHING = { params: { sinceMs: 0, untilMs: Number.MAX_SAFE_INTEGER, sinceUs: 0, untilUs: Number.MAX_SAFE_INTEGER, scoped: 0 as const }, missingCalls: [], calls: 0 };

async function copyTable(
  src: Database,
  dst: Database,
  table: string,
  rule: TableRule | undefined,
  params: Params,
  pace: () => Promise<void>,
): Promise<{ rows: number; payloadsLeftOut: number }> {
  const columns = src.prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)').all(table).map((c) => c.name);
  // One more column, last, when payloads may be left out: whether this row's were (and it had some).
  const select = [...columns.map((c) => selectColumn(c, rule)), leftOutColumn(rule)].join(', ');
  const read = src.prepare(`SELECT ${select} FROM main.${quote(table)} WHERE ${rule?.rows ?? '1'}`).raw(true);
  const write = dst.prepare(`INSERT INTO main.${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  let n = 0;
  let leftOut = 0;
  for (const row of read.iterate(params) as IterableIterator<unknown[]>) {
    leftOut += row.pop() as number;
    write.run(row);
    if (++n % 256 === 0) await pace();
  }
  return { rows: n, payloadsLeftOut: leftOut };
}

function leftOutColumn(rule: TableRule | undefined): string {
  const p = rule?.payloads;
  if (!p) return '0';
  return `(${quote(p.startedAtUs)} < :keepFromUs AND (${p.streams.map((s) => `length(${quote(s.bytes)}) > 0`).join(' OR ')}))`;
}

/** A payload stream's columns as the bundle keeps them: emptied and marked truncated (its total kept) for rows older than the cut. */
function selectColumn(column: string, rule: TableRule | undefined): string {
  const p = rule?.payloads;
  const s = p?.streams.find((x) => x.bytes === column || x.truncated === column);
  if (!p || !s) return quote(column);
  const kept = `${quote(p.startedAtUs)} >= :keepFromUs`;
  if (column === s.bytes) return `CASE WHEN ${kept} THEN ${quote(s.bytes)} ELSE x'' END`;
  return `CASE WHEN ${kept} OR length(${quote(s.bytes)}) = 0 THEN ${quote(s.truncated)} ELSE 1 END`;
}

/** AUTOINCREMENT's high-water marks, so a table's next id in the bundle is the one the node would have given. */
function copySequences(src: Database, dst: Database): void {
  const has = (db: Database) => db.prepare("SELECT 1 FROM main.sqlite_schema WHERE name = 'sqlite_sequence'").get() !== undefined;
  if (!has(src) || !has(dst)) return;
  dst.exec('DELETE FROM main.sqlite_sequence');
  const insert = dst.prepare<[string, number]>('INSERT INTO main.sqlite_sequence (name, seq) VALUES (?, ?)');
  for (const r of src.prepare<[], { name: string; seq: number }>('SELECT name, seq FROM main.sqlite_sequence').all()) insert.run(r.name, r.seq);
}

/** Lets the event loop run when a slice has held it for `sliceMs`. */
export function pacer(sliceMs: number): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
