// Retention and CNI STATUS heartbeats, against real SQLite files: a network that stays NotReady keeps its
// failing STATUS calls whole, thousands a day, and they must never push a pod's calls out. Over the size
// limit the STATUS calls go first (those the readiness timeline links to last), each network keeps only its
// newest, and the age limit treats every call alike, as before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCallStore } from '../../store/calls/call-store.js';
import { openDatabase, type Database } from '../../store/db/open-database.js';
import { createRetentionWorker, type RetentionOptions, type RetentionWorker } from '../../store/retention/retention.js';
import type { CallStore } from '../../store/calls/types.js';
import { syntheticStatusTree, syntheticTree } from '../support/synthetic-calls.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const NOW_MS = Date.parse('2025-11-21T12:00:00Z');
const MiB = 1024 * 1024;
// ~32 KiB a tree (two calls, 8 KiB of stdin and of stdout each).
const PAYLOAD = 8 * 1024;

let dir: string;
let db: Database;
let store: CallStore;
const workers: RetentionWorker[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-retention-status-'));
  db = openDatabase(path.join(dir, 'cnirec.db'));
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

const count = (sql: string, ...params: unknown[]): number => (db.prepare(sql).get(...params) as { n: number }).n;
const statusCalls = () => count("SELECT count(*) AS n FROM calls WHERE command = 'STATUS'");
const podCalls = () => count("SELECT count(*) AS n FROM calls WHERE command = 'ADD'");
const orphans = () => count('SELECT count(*) AS n FROM calls c WHERE c.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM calls p WHERE p.id = c.parent_id)');
const stored = (id: string) => store.getCall(id) !== null;

/** Pod call trees (a bridge ADD and its host-local ADD), one per entry, `hoursAgo` before NOW. */
function podTrees(hoursAgo: readonly number[]) {
  const trees = hoursAgo.map((h, i) => syntheticTree((NOW_MS - h * HOUR_MS) * 1000 + i, { payloadBytes: PAYLOAD }));
  store.writeEvents(trees.flatMap((t) => t.events));
  return trees;
}

/** STATUS trees of a network, one per entry, `hoursAgo` before NOW. */
function statusTrees(network: string | null, hoursAgo: readonly number[], payloadBytes = PAYLOAD) {
  const trees = hoursAgo.map((h, i) => syntheticStatusTree((NOW_MS - h * HOUR_MS) * 1000 + i, network, { payloadBytes }));
  store.writeEvents(trees.flatMap((t) => t.events));
  return trees;
}

/** A readiness transition linking to a call, as the timeline keeps it. */
function linkFromTimeline(network: string | null, callId: string) {
  db.prepare("INSERT INTO cni_readiness_transitions (network, at_ms, ready, plugin, call_id) VALUES (?, ?, 0, 'bridge', ?)").run(network ?? '', NOW_MS - DAY_MS, callId);
}

/** n hours spread evenly between `from` and `to` hours ago, oldest first. */
const hoursBetween = (from: number, to: number, n: number) => Array.from({ length: n }, (_, i) => from - ((from - to) * i) / n);

describe('retention by size, with STATUS heartbeats', () => {
  it('deletes STATUS calls, oldest first, before any pod call, and keeps the one the readiness timeline links to', async () => {
    const pods = podTrees(hoursBetween(48, 24, 60));
    const heartbeats = statusTrees('podnet', hoursBetween(20, 0, 400));
    const linked = heartbeats[0]!;
    linkFromTimeline('podnet', linked.root.id);

    const run = await worker({ maxDbBytes: 8 * MiB }).runOnce();

    expect(run).toMatchObject({ bySize: true, overLimit: false });
    // Every pod call is still there, though older than every heartbeat.
    expect(podCalls()).toBe(120);
    for (const t of pods) expect(stored(t.root.id) && stored(t.child.id)).toBe(true);
    // Heartbeats went, whole trees, oldest first; the timeline's link stayed while others could go.
    expect(run!.deleted.calls).toBe(800 - statusCalls());
    expect(statusCalls()).toBeGreaterThan(2);
    expect(stored(linked.root.id) && stored(linked.child.id)).toBe(true);
    expect(stored(heartbeats[1]!.root.id)).toBe(false);
    expect(stored(heartbeats.at(-1)!.root.id)).toBe(true);
    expect(orphans()).toBe(0);
  });

  it('deletes pod calls, oldest first, only once no STATUS call is left', async () => {
    const pods = podTrees(hoursBetween(48, 1, 400));
    const heartbeats = statusTrees('podnet', hoursBetween(0.9, 0, 20));
    linkFromTimeline('podnet', heartbeats[0]!.root.id);

    const run = await worker({ maxDbBytes: 8 * MiB }).runOnce();

    expect(run).toMatchObject({ bySize: true, overLimit: false });
    expect(statusCalls()).toBe(0);
    expect(stored(pods[0]!.root.id)).toBe(false);
    expect(stored(pods.at(-1)!.root.id)).toBe(true);
    expect(podCalls()).toBeGreaterThan(0);
    expect(orphans()).toBe(0);
  });
});

describe('STATUS calls per network', () => {
  it('keeps each network its newest STATUS calls and the ones its timeline links to, whatever the size, and leaves pod calls alone', async () => {
    const pods = podTrees([60, 50]);
    const a = statusTrees('a', [10, 9, 8, 7, 6, 5, 4, 3], 100);
    const b = statusTrees('b', [10, 9, 8], 100);
    const unknown = statusTrees(null, [10, 9, 8, 7, 6, 5, 4], 100);
    linkFromTimeline('a', a[0]!.root.id);

    const run = await worker({ maxAgeMs: 30 * DAY_MS, statusCallsPerNetwork: 5 }).runOnce();

    // a: the 3 oldest are past the cap, the oldest of them linked; the unknown network: its 2 oldest.
    expect(run?.deleted).toMatchObject({ calls: 8, helpers: 0 });
    expect(run).toMatchObject({ statusCapped: { calls: 8, helpers: 0 }, bySize: false });
    const kept = (trees: typeof a) => trees.filter((t) => stored(t.root.id) && stored(t.child.id)).map((t) => a.concat(b, unknown).indexOf(t));
    expect(kept(a)).toEqual([0, 3, 4, 5, 6, 7]);
    expect(kept(b)).toEqual([8, 9, 10]);
    expect(kept(unknown)).toEqual([13, 14, 15, 16, 17]);
    for (const t of pods) expect(stored(t.root.id) && stored(t.child.id)).toBe(true);
    expect(orphans()).toBe(0);
  });

  it('keeps every STATUS call when the cap is 0', async () => {
    statusTrees('a', [3, 2, 1], 100);
    const run = await worker({ maxAgeMs: 30 * DAY_MS, statusCallsPerNetwork: 0 }).runOnce();
    expect(run?.deleted.calls).toBe(0);
    expect(statusCalls()).toBe(6);
  });
});

describe('retention by age, with STATUS heartbeats', () => {
  it('deletes every call older than the maximum age, STATUS or not, and keeps the younger ones alike', async () => {
    const [oldPod, youngPod] = podTrees([10 * 24, 24]);
    const [oldStatus, youngStatus] = statusTrees('podnet', [10 * 24, 24], 100);

    const run = await worker({ maxAgeMs: 7 * DAY_MS }).runOnce();

    expect(run?.deleted.calls).toBe(4);
    expect(stored(oldPod!.root.id) || stored(oldStatus!.root.id)).toBe(false);
    expect(stored(youngPod!.root.id) && stored(youngStatus!.root.id) && stored(youngStatus!.child.id)).toBe(true);
  });
});
