/**
 * Opens (or creates) the recorder's SQLite file, tuned for one writer that
 * appends a lot and readers that page through recent rows, and brings its
 * schema up to date. Everything that can go wrong here and that a user can
 * fix comes out as a StoreError.
 */

import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { toStoreError } from './errors.js';
import { migrate } from './migrations.js';
import { writePlannerHints } from './planner-hints.js';

export type { Database } from 'better-sqlite3';

/** Long enough to ride out a checkpoint or a CLI reader, short enough to notice a stuck lock. */
const BUSY_TIMEOUT_MS = 5_000;
/** After a checkpoint, shrink the WAL back to this instead of leaving it at its peak size. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

const PAGE_SIZE_BYTES = 16 * 1024;
/** Page cache of a read-only connection (openReadConnection). */
const READ_CACHE_KIB = 2000;

/** Payloads hold plugin configs and their output, which may carry credentials: owner only. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export function openDatabase(file: string): Database {
  const inMemory = file === ':memory:';
  if (!inMemory) prepareFile(file);

  let db: Database;
  try {
    db = new BetterSqlite3(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw toStoreError(err, file, 'open');
  }
  try {
    configure(db);
    migrate(db, file);
    writePlannerHints(db);
    if (!inMemory) tightenModes(file);
    return db;
  } catch (err) {
    db.close();
    throw toStoreError(err, file, 'open');
  }
}

/**
 * A second connection to a database the daemon has opened (and migrated)
 * already, for reads only: the API's read workers. It never writes (query
 * only), so it needs no migration, and in WAL mode it reads beside the
 * daemon's writes without blocking them or being blocked.
 */
export function openReadConnection(file: string): Database {
  let db: Database;
  try {
    db = new BetterSqlite3(file, { fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw toStoreError(err, file, 'open');
  }
  try {
    db.pragma('query_only = ON');
    // SQLite's default 2 MiB page cache, not better-sqlite3's 16: the OS caches the file for every
    // connection alike, and a larger cache per connection measured no faster (bench/README.md, "Read workers").
    db.pragma(`cache_size = -${READ_CACHE_KIB}`);
    return db;
  } catch (err) {
    db.close();
    throw toStoreError(err, file, 'open');
  }
}

/**
 * Creates the directory and the file ourselves, so they get owner-only
 * modes: SQLite would create the file 0644 (and gives the -wal and -shm
 * files the database file's mode).
 */
function prepareFile(file: string): void {
  const dir = path.dirname(path.resolve(file));
  try {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  } catch (err) {
    throw toStoreError(err, file, 'create the directory for');
  }
  try {
    // An empty file is a valid new database to SQLite. O_CREAT without
    // O_TRUNC: an existing file is left as it is.
    fs.closeSync(fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, FILE_MODE));
  } catch (err) {
    throw toStoreError(err, file, 'create');
  }
}

/**
 * Tightens a database an older build (or a person) left readable by others.
 * Only once it proved to be ours: a file we refuse is not touched. Not
 * owning it (EPERM) is fine, its owner chose the mode.
 */
function tightenModes(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(f, FILE_MODE);
    } catch {
      // missing (-shm before the first read) or not ours: see above
    }
  }
}

function configure(db: Database): void {
  // Like auto_vacuum below, only takes effect on a new file. A finished
  // call's row is ~3 KiB (config on stdin, result on stdout): a 4 KiB page
  // holds one and wastes the rest, a 16 KiB page holds five. Fewer, fuller
  // pages made the write benchmark markedly faster and the file ~20% smaller.
  db.pragma(`page_size = ${PAGE_SIZE_BYTES}`);
  // Must come before the first table exists (and before WAL, which writes the
  // header); on an existing database it is a no-op, as SQLite only changes
  // it through a full VACUUM. Incremental lets retention give pages back a
  // few at a time instead of locking the file for a whole VACUUM.
  db.pragma('auto_vacuum = INCREMENTAL');
  // WAL: readers (API, CLI) never block the collector's writes, nor it them.
  db.pragma('journal_mode = WAL');
  // In WAL mode NORMAL cannot corrupt the file; a power cut may lose the last
  // transactions, an acceptable price for not fsyncing every batch.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
}
