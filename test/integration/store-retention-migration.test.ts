// Migration 4 against a file an older build wrote (schema 2, no
// auto-vacuum): it is converted once, keeps every row, and can then shrink.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallStore } from '../../store/calls/call-store.js';
import { MIGRATIONS, latestVersion, migrate } from '../../store/db/migrations.js';
import { openDatabase } from '../../store/db/open-database.js';
import { createRetentionWorker } from '../../store/retention/retention.js';
import { syntheticTree } from '../support/synthetic-calls.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-retention-mig-'));
  file = path.join(dir, 'old.db');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const NOW_US = Date.parse('2025-11-21T12:00:00Z') * 1000;

/** What a build with schema 2 and without auto_vacuum left on disk, with some calls in it. */
function writeOldDatabase(trees: number): string[] {
  const db = new BetterSqlite3(file);
  db.pragma('auto_vacuum = NONE');
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  migrate(db, file, MIGRATIONS.filter((m) => m.version <= 2));
  // Today's writer needs the columns later migrations add: add them for the
  // write, then drop them, so the file is schema 2 again.
  const later = ['calls', 'helpers', 'cache_entries'];
  const laterCallColumns = [
    "exec_chain_json TEXT NOT NULL DEFAULT '[]'",
    'env_truncated INTEGER NOT NULL DEFAULT 0',
    'path_truncated INTEGER NOT NULL DEFAULT 0',
    'stdout_after_exit_offset INTEGER',
    'stderr_after_exit_offset INTEGER',
    'stdio_shared INTEGER NOT NULL DEFAULT 0',
    'uncaptured_io INTEGER NOT NULL DEFAULT 0',
    'gc_driven INTEGER NOT NULL DEFAULT 0',
    'network TEXT',
    "changes_json TEXT NOT NULL DEFAULT 'null'",
    'change_summary TEXT',
    "kernel_messages_json TEXT NOT NULL DEFAULT '[]'",
    'lost_records_cause TEXT',
  ];
  for (const t of later) db.exec(`ALTER TABLE ${t} ADD COLUMN redactions_json TEXT`);
  for (const c of laterCallColumns) db.exec(`ALTER TABLE calls ADD COLUMN ${c}`);
  // And the table migration 12 adds (the writer notes calls updated after their finish there).
  db.exec('CREATE TABLE call_updates (id INTEGER PRIMARY KEY, call_id TEXT NOT NULL, at_us INTEGER NOT NULL)');
  const store = createCallStore(db);
  const all = Array.from({ length: trees }, (_, i) => syntheticTree(NOW_US - (trees - i) * 1_000_000, { payloadBytes: 4096 }));
  store.writeEvents(all.flatMap((t) => t.events));
  for (const t of later) db.exec(`ALTER TABLE ${t} DROP COLUMN redactions_json`);
  for (const c of laterCallColumns) db.exec(`ALTER TABLE calls DROP COLUMN ${c.split(' ')[0]!}`);
  db.exec('DROP TABLE call_updates');
  expect(db.pragma('auto_vacuum', { simple: true })).toBe(0);
  expect(db.pragma('user_version', { simple: true })).toBe(2);
  db.close();
  return all.map((t) => t.root.id);
}

describe('migration 4 (incremental auto-vacuum)', () => {
  it('converts a schema-2 file without auto-vacuum, keeping every row', () => {
    const ids = writeOldDatabase(200);
    const db = openDatabase(file);
    try {
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(db.pragma('user_version', { simple: true })).toBe(latestVersion());
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const store = createCallStore(db);
      expect(store.countCalls()).toBe(400);
      expect(store.getCall(ids[0]!)?.helpers).toHaveLength(1);
      const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index'").pluck().all();
      expect(indexes).toEqual(expect.arrayContaining(['cache_entries_closed', 'ip_history_closed']));
    } finally {
      db.close();
    }
  });

  it('lets retention shrink the converted file', async () => {
    writeOldDatabase(400);
    const db = openDatabase(file);
    try {
      const sizeOf = () => fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const before = sizeOf();
      const worker = createRetentionWorker(db, { maxAgeMs: 60_000, maxDbBytes: 0, now: () => NOW_US / 1000 - 100_000 });
      const run = await worker.runOnce();
      expect(run?.deleted.calls).toBeGreaterThan(300);
      expect(sizeOf()).toBeLessThan(before / 2);
      await worker.stop();
    } finally {
      db.close();
    }
  });

  it('leaves a file that already has incremental auto-vacuum alone, and runs once', () => {
    openDatabase(file).close();
    const db = openDatabase(file);
    try {
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(migrate(db, file)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
