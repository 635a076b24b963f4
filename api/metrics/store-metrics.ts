/**
 * The store's housekeeping as metrics: how long its writes hold the database
 * (every write is synchronous, so that is how long the daemon stalls), and
 * what retention deletes and how big the database is against its limit.
 */

import { Counter, Histogram, type Registry } from 'prom-client';
import type { RetentionCounts, RetentionStatus, WriteTiming } from '../../store/index.js';
import { scrapedMetrics } from './scraped-metrics.js';

/** Writes are sub-millisecond batches normally; tens of ms start to show in the tail, seconds are an outage. */
export const WRITE_DURATION_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const TABLE_LABELS: Record<keyof RetentionCounts, string> = {
  calls: 'calls',
  helpers: 'helpers',
  tracerEvents: 'tracer_events',
  cacheEntries: 'cache_entries',
  ipHistory: 'ip_history',
  cacheFindings: 'cache_findings',
  confVersions: 'conf_versions',
  callBinaries: 'call_binaries',
  pluginBinaries: 'plugin_binaries',
  runtimeSandboxes: 'runtime_sandboxes',
};

/** Returns the unsubscribe for the write observer (call it when the app closes). */
export function registerWriteMetrics(registry: Registry, timing: WriteTiming): () => void {
  const histogram = new Histogram({
    name: 'cnirec_store_write_duration_seconds',
    help: 'Duration of store write transactions (ingest, cache, retention deletes, vacuum steps, checkpoints), by kind',
    labelNames: ['kind'] as const,
    buckets: WRITE_DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  scrapedMetrics(registry).gauge(
    'cnirec_store_write_stall_max_seconds',
    'Longest single store write since the daemon started: the longest the daemon stopped reading the tracer and serving the API',
    () => timing.stats().maxSeconds,
  );
  return timing.observe((kind, seconds) => histogram.observe({ kind }, seconds));
}

export function registerRetentionMetrics(registry: Registry, status: () => RetentionStatus): void {
  const scraped = scrapedMetrics(registry);
  const gauge = (name: string, help: string, value: (s: RetentionStatus) => number) => scraped.gauge(name, help, () => value(status()));
  const total = (name: string, help: string, value: (s: RetentionStatus) => number) => scraped.total(name, help, () => value(status()));

  new Counter({
    name: 'cnirec_retention_deleted_rows_total',
    help: 'Rows retention deleted, by table (helpers go with their calls)',
    labelNames: ['table'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const deleted = status().deletedTotal;
      for (const [key, table] of Object.entries(TABLE_LABELS)) this.inc({ table }, deleted[key as keyof RetentionCounts]);
    },
  });
  total('cnirec_retention_runs_total', 'Retention runs completed', (s) => s.runs);
  total('cnirec_retention_size_runs_total', 'Retention runs that deleted data before its maximum age because the database was over its size limit', (s) => s.sizeRuns);
  gauge('cnirec_retention_over_limit', '1 when the last retention run ended over the size limit with nothing left it may delete, else 0', (s) => (s.lastRun?.overLimit ? 1 : 0));
  gauge('cnirec_retention_last_run_timestamp_seconds', 'When the last retention run started (Unix seconds; 0 before the first)', (s) =>
    s.lastRun === null ? 0 : Date.parse(s.lastRun.startedAt) / 1000,
  );
  gauge('cnirec_retention_max_age_seconds', 'Maximum age of stored data (0: no limit)', (s) => s.maxAgeMs / 1000);
  gauge('cnirec_retention_max_db_bytes', 'Maximum database size, pages in use plus WAL (0: no limit)', (s) => s.maxDbBytes);
  gauge('cnirec_db_used_bytes', 'Database size as retention counts it: pages in use plus the WAL', (s) => s.size.usedBytes);
  gauge('cnirec_db_wal_bytes', 'Size of the database WAL file', (s) => s.size.walBytes);
  gauge('cnirec_db_free_bytes', 'Free pages inside the database file, not yet given back to the disk', (s) => s.size.freeBytes);
}
