// /healthz and /metrics show retention as the daemon wires it: the limits,
// the last run, rows deleted by table, the database size and write stalls.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../api/deps.js';
import { registerHealth } from '../../api/routes/health.js';
import { registerMetrics } from '../../api/routes/metrics.js';
import { createRetentionWiring } from '../../daemon/retention-wiring.js';
import { createCallStore, openDatabase, writeTimingFor, type CallStore, type Database, type RetentionWorker } from '../../store/index.js';
import { STATUS_CALLS_PER_NETWORK } from '../../store/retention/retention-policy.js';
import { syntheticStatusTree, syntheticTree } from '../support/synthetic-calls.js';
import { TRACER_STATUS } from './api-harness.js';
import { COLLECTOR_STATS, STORE_STATUS } from './harness.js';

const DAY_MS = 86_400_000;
const MiB = 1024 * 1024;

let dir: string;
let db: Database;
let store: CallStore;
let worker: RetentionWorker;
let app: FastifyInstance;
const logged: { level: number; msg: string }[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-retention-health-'));
  db = openDatabase(path.join(dir, 'r.db'));
  store = createCallStore(db);
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as { level: number; msg: string }) });
  worker = createRetentionWiring(db, { retentionMaxAge: 7 * DAY_MS, retentionMaxDbSize: 4 * MiB }, log);
  const deps: ApiDeps = {
    tracerStatus: () => TRACER_STATUS,
    collectorStats: () => COLLECTOR_STATS,
    storeStatus: () => STORE_STATUS,
    store,
    retentionStatus: () => worker.status(),
    writeTiming: writeTimingFor(db),
  };
  app = Fastify();
  registerHealth(app, deps);
  registerMetrics(app, deps);
  await app.ready();
});

afterEach(async () => {
  await app.close();
  await worker.stop();
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  logged.length = 0;
});

const metric = async (series: string) => {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('retention on /healthz and /metrics', () => {
  it('shows the limits before the first run', async () => {
    const body = (await app.inject({ method: 'GET', url: '/healthz' })).json<{ retention: Record<string, unknown> }>();
    expect(body.retention).toMatchObject({ enabled: true, maxAgeMs: 7 * DAY_MS, maxDbBytes: 4 * MiB, lastRun: null, runs: 0, autoVacuum: 'incremental' });
    expect(await metric('cnirec_retention_max_db_bytes')).toBe(4 * MiB);
    expect(await metric('cnirec_retention_max_age_seconds')).toBe(7 * 86_400);
  });

  it('after a run that deleted by age and by size: the run, rows by table, size, write stalls and a warning', async () => {
    const now = Date.now();
    const trees = [...Array.from({ length: 10 }, (_, i) => syntheticTree((now - 30 * DAY_MS) * 1000 + i)), ...Array.from({ length: 300 }, (_, i) => syntheticTree(now * 1000 - 1e6 + i, { payloadBytes: 8 * 1024 }))];
    store.writeEvents(trees.flatMap((t) => t.events));
    const run = await worker.runOnce();
    expect(run?.bySize).toBe(true);

    const body = (await app.inject({ method: 'GET', url: '/healthz' })).json<{ retention: { runs: number; sizeRuns: number; lastRun: { bySize: boolean }; longestWrite: { seconds: number } } }>();
    expect(body.retention.runs).toBe(1);
    expect(body.retention.sizeRuns).toBe(1);
    expect(body.retention.lastRun.bySize).toBe(true);
    expect(body.retention.longestWrite.seconds).toBeGreaterThan(0);

    expect(await metric('cnirec_retention_deleted_rows_total{table="calls"}')).toBe(run?.deleted.calls);
    expect(await metric('cnirec_retention_deleted_rows_total{table="helpers"}')).toBe(run?.deleted.helpers);
    expect(await metric('cnirec_retention_size_runs_total')).toBe(1);
    expect(await metric('cnirec_db_used_bytes')).toBeLessThanOrEqual(4 * MiB);
    expect(await metric('cnirec_store_write_duration_seconds_count{kind="retention"}')).toBeGreaterThan(0);
    expect(await metric('cnirec_store_write_duration_seconds_count{kind="vacuum"}')).toBeGreaterThan(0);
    expect(await metric('cnirec_store_write_stall_max_seconds')).toBeGreaterThan(0);
    // Data dropped before its maximum age: a warning in the log and a tracer event.
    expect(logged.some((l) => l.level === 40 && /before its maximum age/.test(l.msg))).toBe(true);
    expect(store.listTracerEvents(5).map((e) => e.kind)).toContain('retention-size');
  });

  it('does not say data older than the maximum age went when only STATUS calls past their network\'s newest did', async () => {
    const now = Date.now();
    store.writeEvents(Array.from({ length: STATUS_CALLS_PER_NETWORK + 3 }, (_, i) => syntheticStatusTree(now * 1000 - 1e6 + i, 'podnet', { payloadBytes: 10 }).events).flat());
    const run = await worker.runOnce();
    expect(run?.statusCapped.calls).toBe(6);
    expect(logged.filter((l) => l.level >= 30 && /retention/.test(l.msg))).toEqual([]);
  });

  it('counts ingest writes in the write histogram', async () => {
    store.writeEvents(syntheticTree(Date.now() * 1000).events);
    expect(await metric('cnirec_store_write_duration_seconds_count{kind="calls"}')).toBe(1);
  });
});
