// Opening the database file: where it goes, who may read it, how it is
// tuned, and what the user is told when it cannot be used.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../store/db/errors.js';
import { APPLICATION_ID, MIGRATIONS, latestVersion, migrate, type Migration } from '../../store/db/migrations.js';
import { openDatabase } from '../../store/db/open-database.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-open-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const mode = (p: string) => fs.statSync(p).mode & 0o777;

function openError(file: string): StoreError {
  try {
    openDatabase(file).close();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error(`expected opening ${file} to fail`);
}

describe('opening a new database', () => {
  it('creates missing directories owner-only (0700) and the file and its WAL owner-only (0600)', () => {
    const file = path.join(dir, 'var', 'lib', 'cnirec', 'calls.db');
    const db = openDatabase(file);
    db.prepare('INSERT INTO tracer_events (at_us, kind, detail_json) VALUES (1, ?, ?)').run('started', '{}');
    expect(mode(path.join(dir, 'var'))).toBe(0o700);
    expect(mode(path.dirname(file))).toBe(0o700);
    expect(mode(file)).toBe(0o600);
    expect(mode(`${file}-wal`)).toBe(0o600);
    db.close();
  });

  it('tightens an existing file that others could read', () => {
    const file = path.join(dir, 'calls.db');
    fs.writeFileSync(file, '', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    openDatabase(file).close();
    expect(mode(file)).toBe(0o600);
  });

  it.each<[string, string, unknown]>([
    ['journal_mode', 'journal_mode', 'wal'],
    ['synchronous (NORMAL)', 'synchronous', 1],
    ['foreign_keys', 'foreign_keys', 1],
    ['busy_timeout', 'busy_timeout', 5000],
    ['auto_vacuum (INCREMENTAL)', 'auto_vacuum', 2],
    ['page_size', 'page_size', 16384],
    ['application_id', 'application_id', APPLICATION_ID],
    ['user_version', 'user_version', latestVersion()],
  ])('sets %s', (_name, pragma, expected) => {
    const db = openDatabase(path.join(dir, 'calls.db'));
    expect(db.pragma(pragma, { simple: true })).toBe(expected);
    db.close();
  });

  it('creates the tables and indexes of migration 1', () => {
    const db = openDatabase(path.join(dir, 'calls.db'));
    const names = (db.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map(
      (r) => r.name,
    );
    expect(names).toEqual(expect.arrayContaining(['calls', 'helpers', 'tracer_events', 'calls_by_pod', 'calls_failed', 'calls_running', 'helpers_by_call']));
    db.close();
  });
});

describe('reopening a database', () => {
  it('keeps its rows and applies no migration twice', () => {
    const file = path.join(dir, 'calls.db');
    const first = openDatabase(file);
    first.prepare('INSERT INTO tracer_events (at_us, kind, detail_json) VALUES (1, ?, ?)').run('started', '{}');
    first.close();
    for (let i = 0; i < 3; i++) {
      const again = openDatabase(file);
      expect(migrate(again, file)).toEqual([]);
      expect(again.pragma('user_version', { simple: true })).toBe(latestVersion());
      expect(again.prepare('SELECT count(*) AS n FROM tracer_events').get()).toEqual({ n: 1 });
      again.close();
    }
  });

  it('applies only the migrations it has not seen, each with its version', () => {
    const file = path.join(dir, 'calls.db');
    openDatabase(file).close();
    const db = new BetterSqlite3(file);
    const next: Migration = { version: latestVersion() + 1, name: 'test column', up: (d) => d.exec('ALTER TABLE tracer_events ADD COLUMN note TEXT') };
    expect(migrate(db, file, [...MIGRATIONS, next])).toEqual([next.version]);
    expect(migrate(db, file, [...MIGRATIONS, next])).toEqual([]);
    expect(db.pragma('user_version', { simple: true })).toBe(next.version);
    db.close();
  });

  it('rolls a failing migration back entirely, version included', () => {
    const file = path.join(dir, 'calls.db');
    openDatabase(file).close();
    const db = new BetterSqlite3(file);
    const broken: Migration = {
      version: latestVersion() + 1,
      name: 'broken',
      up: (d) => {
        d.exec('CREATE TABLE half_done (x INTEGER)');
        d.exec('THIS IS NOT SQL');
      },
    };
    expect(() => migrate(db, file, [...MIGRATIONS, broken])).toThrow();
    expect(db.pragma('user_version', { simple: true })).toBe(latestVersion());
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'half_done'").get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('a file that cannot be used', () => {
  const cases: [string, (file: string) => void, string, RegExp][] = [
    ['a text file', (f) => fs.writeFileSync(f, 'not a database, just notes\n'.repeat(40)), 'not-a-database', /is not an SQLite database; move it away/],
    [
      'another program’s SQLite database',
      (f) => {
        const other = new BetterSqlite3(f);
        other.exec('CREATE TABLE recipes (name TEXT)');
        other.close();
      },
      'not-a-database',
      /cnirec did not create; move it away/,
    ],
    [
      'a database from a newer cnirec',
      (f) => {
        openDatabase(f).close();
        const newer = new BetterSqlite3(f);
        newer.pragma('user_version = 999');
        newer.close();
      },
      'schema-too-new',
      /newer cnirec \(schema 999.*upgrade cnirec/,
    ],
  ];

  it.each(cases)('gives a StoreError naming the file and what to do for %s', (_name, setUp, code, message) => {
    const file = path.join(dir, 'calls.db');
    setUp(file);
    const err = openError(file);
    expect(err.code).toBe(code);
    expect(err.file).toBe(file);
    expect(err.message).toContain(file);
    expect(err.message).toMatch(message);
  });

  it('gives a not-writable StoreError when the directory cannot be created', () => {
    // A regular file where a directory should be fails even for root, unlike permission bits.
    const blocker = path.join(dir, 'blocker');
    fs.writeFileSync(blocker, '');
    const file = path.join(blocker, 'sub', 'calls.db');
    const err = openError(file);
    expect(err.code).toBe('not-writable');
    expect(err.message).toMatch(/^Cannot create the directory for the database .*calls\.db because part of its path is a file, not a directory; /);
  });

  it('gives a not-writable StoreError when the path is a directory', () => {
    const err = openError(dir);
    expect(err.code).toBe('not-writable');
    expect(err.message).toContain(dir);
  });

  it('leaves a file it refused untouched, mode included', () => {
    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'keep me, I am not a database'.repeat(10));
    fs.chmodSync(file, 0o644);
    openError(file);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me, I am not a database'.repeat(10));
    expect(mode(file)).toBe(0o644);
  });
});
