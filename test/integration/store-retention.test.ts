// Retention against real SQLite files: what is too old or over the size
// limit goes, with everything that hangs off it, the file really shrinks,
// and what is in flight or still current stays.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallStore } from '../../store/calls/call-store.js';
import { openDatabase, type Database } from '../../store/db/open-database.js';
import { createRetentionWorker, type RetentionOptions, type RetentionWorker } from '../../store/retention/retention.js';
import type { CallStore } from '../../store/calls/types.js';
import { syntheticTree } from '../support/synthetic-calls.js';

const DAY_MS = 86_400_000;
const NOW_MS = Date.parse('2025-11-21T12:00:00Z');
const MiB = 1024 * 1024;

let dir: string;
let file: string;
let db: Database;
let store: CallStore;
const workers: RetentionWorker[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-retention-'));
  file = path.join(dir, 'cnirec.db');
  db = openDatabase(file);
  store = createCallStore(db);
});

afterEach(async () => {
  for (const w of workers.splice(0)) await w.stop();
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function worker(opts: Partial<RetentionOptions>): RetentionWorker {
  const w = createRetentionWorker(db, { maxAgeMs: 0, maxDbBytes: 0, now: () => NOW_MS, ...opts });
  workers.push(w);
  return w;
}

const count = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;

/** Rows that lost what they belong to: must always be 0. */
function orphans(): { helpers: number; children: number } {
  return {
    helpers: count('SELECT count(*) AS n FROM helpers h WHERE NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = h.call_id)'),
    children: count('SELECT count(*) AS n FROM calls c WHERE c.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM calls p WHERE p.id = c.parent_id)'),
  };
}

/** One tree (bridge + delegated host-local, a helper each) per entry, `daysAgo` before NOW. */
function writeTrees(daysAgo: readonly number[], opts: { payloadBytes?: number; running?: boolean } = {}) {
  const trees = daysAgo.map((d, i) => syntheticTree((NOW_MS - d * DAY_MS) * 1000 + i, opts));
  store.writeEvents(trees.flatMap((t) => t.events));
  return trees;
}

function diskBytes(): number {
  const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  return size(file) + size(`${file}-wal`);
}

describe('retention by age', () => {
  it('deletes calls older than the maximum age with their delegated calls and helpers, and keeps the rest', async () => {
    const old = writeTrees([10, 9, 8]);
    const recent = writeTrees([6, 1, 0]);
    expect(count('SELECT count(*) AS n FROM helpers')).toBe(12);

    const run = await worker({ maxAgeMs: 7 * DAY_MS }).runOnce();

    expect(run?.deleted).toMatchObject({ calls: 6, helpers: 6 });
    expect(run?.bySize).toBe(false);
    for (const t of old) expect(store.getCall(t.root.id) ?? store.getCall(t.child.id)).toBeNull();
    for (const t of recent) expect(store.getCall(t.child.id)?.parentId).toBe(t.root.id);
    expect(count('SELECT count(*) AS n FROM calls')).toBe(6);
    expect(count('SELECT count(*) AS n FROM helpers')).toBe(6);
    expect(orphans()).toEqual({ helpers: 0, children: 0 });
  });

  it('keeps a call tree with a call still in flight, however old', async () => {
    const [inFlight] = writeTrees([30], { running: true });
    writeTrees([30]);

    const run = await worker({ maxAgeMs: DAY_MS }).runOnce();

    expect(run?.deleted.calls).toBe(2);
    expect(store.getCall(inFlight!.root.id)?.status).toBe('running');
    expect(store.getCall(inFlight!.child.id)).not.toBeNull();
    expect(orphans()).toEqual({ helpers: 0, children: 0 });
  });

  it('deletes a delegated call whose parent is already gone, once it is old', async () => {
    const [tree] = writeTrees([20]);
    db.prepare('DELETE FROM calls WHERE id = ?').run(tree!.root.id);

    await worker({ maxAgeMs: DAY_MS }).runOnce();

    expect(store.getCall(tree!.child.id)).toBeNull();
    expect(count('SELECT count(*) AS n FROM helpers')).toBe(0);
  });

  it('prunes old tracer events and closed cache versions, IP history and findings, never current ones', async () => {
    const old = NOW_MS - 10 * DAY_MS;
    const recent = NOW_MS - DAY_MS;
    for (const [at, kind] of [[old, 'started'], [recent, 'stopped']] as const) store.recordTracerEvent(kind, {}, at * 1000);
    const entry = db.prepare(`INSERT INTO cache_entries (path, dir, format, digest, file_mtime_ms, first_seen_ms, last_seen_ms, superseded_at_ms, removed_at_ms, ips_json, cni_args_json)
      VALUES (?, '/var/lib/cni/results', 'cniCacheV1', 'd', ?, ?, ?, ?, ?, '[]', '[]')`);
    entry.run('/r/old-superseded', old, old, old, old, null);
    entry.run('/r/old-removed', old, old, old, null, old);
    entry.run('/r/recent-removed', recent, recent, recent, null, recent);
    entry.run('/r/old-but-live', old, old, NOW_MS, null, null);
    const ip = db.prepare("INSERT INTO ip_history (ip, source, path, from_ms, to_ms) VALUES (?, 'host-local', ?, ?, ?)");
    ip.run('10.88.0.2', '/n/10.88.0.2', old - DAY_MS, old);
    ip.run('10.88.0.3', '/n/10.88.0.3', old - DAY_MS, recent);
    ip.run('10.88.0.4', '/n/10.88.0.4', old - DAY_MS, null);
    const finding = db.prepare("INSERT INTO cache_findings (kind, subject, message, first_seen_ms, last_seen_ms, resolved_at_ms) VALUES ('corrupt-cache-file', ?, 'm', ?, ?, ?)");
    finding.run('old-resolved', old, old, old);
    finding.run('old-open', old, old, null);

    const run = await worker({ maxAgeMs: 7 * DAY_MS }).runOnce();

    expect(run?.deleted).toMatchObject({ tracerEvents: 1, cacheEntries: 2, ipHistory: 1, cacheFindings: 1 });
    expect(db.prepare('SELECT path FROM cache_entries ORDER BY path').pluck().all()).toEqual(['/r/old-but-live', '/r/recent-removed']);
    expect(db.prepare('SELECT ip FROM ip_history ORDER BY ip').pluck().all()).toEqual(['10.88.0.3', '10.88.0.4']);
    expect(db.prepare('SELECT subject FROM cache_findings').pluck().all()).toEqual(['old-open']);
    expect(store.listTracerEvents(10).map((e) => e.kind)).toEqual(['stopped']);
  });

  it('leaves keyset pagination working across the rows it deletes', async () => {
    writeTrees([9, 8, 7.5, 3, 2, 1]);
    const first = store.listCalls({}, 3);
    await worker({ maxAgeMs: 7 * DAY_MS }).runOnce();
    const rest = store.listCalls({}, 100, first.nextCursor);
    const ids = [...first.items, ...rest.items].map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(rest.items.every((c) => c.startedAtUs >= (NOW_MS - 7 * DAY_MS) * 1000)).toBe(true);
    expect(rest.nextCursor).toBeNull();
  });
});

describe('retention by size', () => {
  it('deletes the oldest calls until the file on disk is under the limit, and says so in a tracer event', async () => {
    // ~32 KiB a tree: 800 trees are ~25 MiB of data against an 8 MiB limit.
    const trees = writeTrees(Array.from({ length: 800 }, (_, i) => 1 - i / 1000), { payloadBytes: 8 * 1024 });
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = diskBytes();
    expect(before).toBeGreaterThan(20 * MiB);

    const w = worker({ maxDbBytes: 8 * MiB });
    const run = await w.runOnce();

    expect(run?.bySize).toBe(true);
    expect(run?.overLimit).toBe(false);
    expect(diskBytes()).toBeLessThanOrEqual(8 * MiB);
    expect(w.status().size.usedBytes).toBeLessThanOrEqual(8 * MiB);
    // Oldest first: the newest tree is there, the oldest is not.
    expect(store.getCall(trees.at(-1)!.root.id)).not.toBeNull();
    expect(store.getCall(trees[0]!.root.id)).toBeNull();
    expect(orphans()).toEqual({ helpers: 0, children: 0 });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const [event] = store.listTracerEvents(1);
    expect(event?.kind).toBe('retention-size');
    expect(event?.detail).toMatchObject({ maxDbBytes: 8 * MiB, sizeBeforeBytes: before });
    // Many short transactions, not one long one.
    expect(run!.steps).toBeGreaterThan(10);
  });

  it('lets other writes in between its steps', async () => {
    writeTrees(Array.from({ length: 600 }, (_, i) => 1 - i / 1000), { payloadBytes: 8 * 1024 });
    let done = false;
    let writesDuringRun = 0;
    const run = worker({ maxDbBytes: 6 * MiB })
      .runOnce()
      .finally(() => (done = true));
    const ingest = async () => {
      for (let i = 0; !done; i++) {
        store.writeEvents(syntheticTree(NOW_MS * 1000 + i).events);
        writesDuringRun++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([run, ingest()]);
    expect(writesDuringRun).toBeGreaterThan(5);
    expect(orphans()).toEqual({ helpers: 0, children: 0 });
  });

  it('reports being over the limit when only calls in flight are left', async () => {
    writeTrees(Array.from({ length: 300 }, () => 1), { payloadBytes: 8 * 1024, running: true });
    const run = await worker({ maxDbBytes: 4 * MiB }).runOnce();
    expect(run?.overLimit).toBe(true);
    expect(count("SELECT count(*) AS n FROM calls WHERE status = 'running'")).toBe(300);
  });
});

describe('limits set to 0', () => {
  it('turns retention off: nothing is deleted, however old or large', async () => {
    writeTrees([400, 300], { payloadBytes: 64 * 1024 });
    const w = worker({ maxAgeMs: 0, maxDbBytes: 0 });
    expect(await w.runOnce()).toBeNull();
    expect(w.status().enabled).toBe(false);
    expect(count('SELECT count(*) AS n FROM calls')).toBe(4);
  });

  it('applies one limit when only the other is 0', async () => {
    writeTrees([400, 0]);
    const run = await worker({ maxAgeMs: 0, maxDbBytes: 512 * MiB }).runOnce();
    expect(run?.deleted.calls).toBe(0);
    expect(count('SELECT count(*) AS n FROM calls')).toBe(4);
  });
});

describe('status', () => {
  it('shows the limits, the last run and the totals', async () => {
    writeTrees([10]);
    const w = worker({ maxAgeMs: 7 * DAY_MS, maxDbBytes: 64 * MiB });
    expect(w.status().lastRun).toBeNull();
    await w.runOnce();
    const s = w.status();
    expect(s).toMatchObject({ enabled: true, maxAgeMs: 7 * DAY_MS, maxDbBytes: 64 * MiB, runs: 1, sizeRuns: 0, autoVacuum: 'incremental' });
    expect(s.deletedTotal).toMatchObject({ calls: 2, helpers: 2 });
    expect(s.lastRun?.startedAt).toBe(new Date(NOW_MS).toISOString());
  });
});
