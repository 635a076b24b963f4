/**
 * Fault: the daemon itself killed with SIGKILL in the middle of a burst of
 * calls (and of libcni cache writes), then started again on the same
 * database; and the orderly stop on SIGTERM.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon } from './support/daemon.js';
import { callsOf, echoCall, getJson, health, metric, metrics, poll, startSleeper, type CallDetailBody, type CallSummaryBody } from './support/faults.js';
import { requirePrivilegedSuite } from './support/privileged.js';
import { pidExists } from '../../bench/lib/proc-tree.js';

const canRun = requirePrivilegedSuite();

const CACHE_FIXTURE = path.resolve(import.meta.dirname, '../fixtures/cache/results', `podman-test-net-${'1'.repeat(64)}-eth0`);
const PARALLEL_LOOPS = 4;

function integrity(dbFile: string): string {
  const db = new BetterSqlite3(dbFile, { readonly: true });
  try {
    return (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

describe.runIf(canRun)('the daemon killed or stopped in the middle of its work', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-faults-daemon-'));
  });
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('after SIGKILL in a burst: the database checks ok, every acknowledged call is intact, the cache reconciled once', async () => {
    const db = path.join(scratch, 'kill', 'cnirec.db');
    const results = path.join(scratch, 'kill-results');
    mkdirSync(results, { mode: 0o700 });
    const args = ['--db', db, '--cni-cache-dirs', results, '--host-local-dirs', '', '--cache-rescan-ms', '1000'];
    const first = await startDaemon({ extraArgs: args });
    const bpftracePid = (await health(first.url)).tracer.pid!;

    const prefix = `burst${Date.now().toString(36)}`;
    const sent = new Map<string, Buffer>();
    let bursting = true;
    let n = 0;
    const loop = async () => {
      while (bursting) {
        const id = `${prefix}-${n++}`;
        const r = await echoCall(id, 2048);
        sent.set(id, r.stdinBytes);
      }
    };
    const loops = Array.from({ length: PARALLEL_LOOPS }, loop);
    // libcni cache files appearing during the burst, one per "container".
    const fixture = JSON.parse(readFileSync(CACHE_FIXTURE, 'utf8')) as { containerId: string };
    const cacheIds: string[] = [];
    const writeCache = async () => {
      for (let i = 0; i < 20 && bursting; i++) {
        const containerId = `${prefix}${String(i).padStart(4, '0')}`.padEnd(64, 'c');
        writeFileSync(path.join(results, `podman-test-net-${containerId}-eth0`), JSON.stringify({ ...fixture, containerId }));
        cacheIds.push(containerId);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const caching = writeCache();

    // Acknowledged = shown by the API as finished; their full detail, as served before the kill.
    const acknowledged = await poll(
      'calls of the burst to be stored',
      async () => {
        const items = (await getJson<{ items: CallSummaryBody[] }>(`${first.url}/api/v1/calls?plugin=echo.sh&limit=1000`)).items.filter(
          (c) => c.containerId?.startsWith(prefix) && c.status === 'finished',
        );
        return items.length >= 40 ? items : null;
      },
      30_000,
      () => first.logs(),
    );
    const before = new Map<string, CallDetailBody>();
    for (const c of acknowledged) before.set(c.id, await getJson<CallDetailBody>(`${first.url}/api/v1/calls/${c.id}`));

    const killed = await first.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    bursting = false;
    await Promise.all([...loops, caching]);
    // Its bpftrace dies of the closed pipe at its next line; do not leave it to chance.
    if (pidExists(bpftracePid)) process.kill(bpftracePid, 'SIGKILL');

    expect(integrity(db)).toBe('ok');

    const second = await startDaemon({ extraArgs: args });
    try {
      expect(integrity(db)).toBe('ok');
      // Every call acknowledged before the kill, byte for byte as served then and as the plugin got it.
      for (const [id, detail] of before) {
        const now = await getJson<CallDetailBody>(`${second.url}/api/v1/calls/${id}`);
        expect(now).toEqual(detail);
        const stdin = sent.get(detail.containerId!)!;
        expect(Buffer.from(now.stdin.base64, 'base64').equals(stdin)).toBe(true);
        expect(Buffer.from(now.stdout.base64, 'base64').equals(stdin)).toBe(true);
      }
      // No call twice, none left running: what the kill cut short is marked so.
      const all = (await getJson<{ items: CallSummaryBody[] }>(`${second.url}/api/v1/calls?plugin=echo.sh&limit=1000`)).items.filter((c) =>
        c.containerId?.startsWith(prefix),
      );
      const perContainer = new Map<string, number>();
      for (const c of all) perContainer.set(c.containerId!, (perContainer.get(c.containerId!) ?? 0) + 1);
      expect([...perContainer.values()].filter((count) => count > 1)).toEqual([]);
      expect(all.filter((c) => c.status === 'running')).toEqual([]);
      for (const c of all.filter((x) => x.status === 'incomplete')) expect(c.incompleteReason).toBe('cnirec stopped while the call ran');
      console.info(`daemon SIGKILL mid-burst: ${sent.size} calls made, ${before.size} acknowledged and intact, ${all.length} stored, ${all.filter((c) => c.status === 'incomplete').length} incomplete`);

      // The cache: every file written during the burst, once, live.
      type Entry = { containerId: string; removedAt: string | null };
      const entries = await poll(
        'the cache to be reconciled',
        async () => {
          const items = (await getJson<{ items: Entry[] }>(`${second.url}/api/v1/cache?includeRemoved=true&limit=1000`)).items.filter((e) => e.containerId.startsWith(prefix));
          return items.length >= cacheIds.length ? items : null;
        },
        20_000,
        () => second.logs(),
      );
      expect(entries.map((e) => e.containerId).sort()).toEqual([...cacheIds].sort());
      expect(entries.filter((e) => e.removedAt !== null)).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 150_000); // two daemon starts, a burst and a read-back of every call: minutes on a loaded 2-core machine

  it('on SIGTERM stops accepting, stores what it has, and closes the database and the tracer in its 5 s budget', async () => {
    const db = path.join(scratch, 'term', 'cnirec.db');
    const daemon = await startDaemon({ extraArgs: ['--db', db] });
    const bpftracePid = (await health(daemon.url)).tracer.pid!;
    const prefix = `term${Date.now().toString(36)}`;
    const sleeper = startSleeper(`${prefix}-sleeper`, 'term');
    try {
      await poll('the sleeper to be recorded', async () => (await callsOf(daemon.url, `${prefix}-sleeper`)).length > 0, 20_000, () => daemon.logs());
      // A plugin that has not exited: what /healthz and the hung-plugin gauge report.
      expect((await health(daemon.url)).calls.oldestRunningAgeMs).toBeGreaterThan(0);
      expect(metric(await metrics(daemon.url), 'cnirec_calls_running_oldest_seconds')).toBeGreaterThan(0);
      // A call that ends just before the signal: still in the collector's hands when it arrives.
      const last = await echoCall(`${prefix}-last`, 4096);

      const t0 = Date.now();
      const exit = await daemon.stop('SIGTERM');
      const tookMs = Date.now() - t0;
      console.info(`SIGTERM → daemon exited in ${tookMs} ms`);
      // Code 0: it finished within its own 5 s budget (past it, it exits 1 saying so).
      expect(exit).toEqual({ code: 0, signal: null });
      expect(daemon.logs()).not.toMatch(/shutdown took too long/);
      expect(pidExists(bpftracePid)).toBe(false);
      await expect(fetch(`${daemon.url}/healthz`)).rejects.toThrow();

      expect(integrity(db)).toBe('ok');
      const conn = new BetterSqlite3(db, { readonly: true });
      try {
        const rows = conn.prepare('SELECT container_id, status, incomplete_reason, stdin FROM calls WHERE container_id LIKE ? ORDER BY container_id').all(`${prefix}-%`) as Array<{
          container_id: string;
          status: string;
          incomplete_reason: string | null;
          stdin: Buffer;
        }>;
        expect(rows.map((r) => [r.container_id, r.status, r.incomplete_reason])).toEqual([
          [`${prefix}-last`, 'finished', null],
          [`${prefix}-sleeper`, 'incomplete', 'the tracer stopped while the call ran'],
        ]);
        expect(Buffer.from(rows[0]!.stdin).equals(last.stdinBytes)).toBe(true);
        const lastEvent = conn.prepare('SELECT kind FROM tracer_events ORDER BY at_us DESC, id DESC LIMIT 1').get() as { kind: string };
        expect(lastEvent.kind).toBe('stopped');
      } finally {
        conn.close();
      }
    } finally {
      await sleeper.stop();
    }
  });
});
