/**
 * The indexes a bundle's record leaves out (they are rebuilt from its rows, and
 * would double the bundle's compressed size), put back when it is opened:
 * those a database of its schema version has, from this build's own
 * migrations. Nothing of the file's is run as SQL: a bundle comes from
 * elsewhere, and its schema version alone picks the statements.
 */

import BetterSqlite3, { type Database } from 'better-sqlite3';
import { latestVersion, MIGRATIONS, migrate } from '../db/index.js';

/** Creates, on the record at `file`, every index its schema version has and it lacks; returns how many (none for a version newer than this build). */
export function restoreIndexes(file: string): number {
  const db: Database = new BetterSqlite3(file, { fileMustExist: true });
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > latestVersion()) return 0;
    const has = new Set(db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'index'").all().map((r) => r.name));
    const missing = indexesOf(version).filter((s) => !has.has(s.name));
    db.transaction(() => {
      for (const s of missing) db.exec(s.sql);
    })();
    return missing.length;
  } finally {
    db.close();
  }
}

/** The indexes of a database this build's migrations bring to `version`. */
function indexesOf(version: number): { name: string; sql: string }[] {
  const reference = new BetterSqlite3(':memory:');
  let statements: { name: string; sql: string }[];
  try {
    migrate(reference, ':memory:', MIGRATIONS.filter((m) => m.version <= version));
    statements = reference.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY rowid").all();
  } finally {
    reference.close();
  }
  return statements;
}
