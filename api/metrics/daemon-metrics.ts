/**
 * Numbers the daemon already keeps (tracer, store, collector, tail), read at
 * scrape time rather than mirrored on every change. Totals the daemon keeps
 * are exposed as counters, set to the daemon's value on each scrape.
 */

import { Counter, Gauge, type Registry } from 'prom-client';
import type { TailStats } from '../tail/tail-stats.js';
import { FINDING_SEVERITY, type CacheStatus } from '../../store/index.js';
import type { MetricsDeps } from '../deps.js';
import { FINDING_KINDS } from '../schemas/findings.js';
import { scrapedMetrics, type ScrapedMetric } from './scraped-metrics.js';
import { noSample } from './no-sample.js';

type DaemonDeps = Pick<MetricsDeps, 'tracerStatus' | 'collectorStats' | 'storeStatus' | 'store' | 'cache' | 'capture'>;

export function registerDaemonMetrics(registry: Registry, deps: DaemonDeps, tailStats: () => TailStats | null): void {
  const { gauge, total } = scrapedMetrics(registry);

  total('cnirec_tracer_lost_events_total', 'Records the tracer reported lost (perf buffer overruns)', () => deps.tracerStatus().lostEvents);
  total('cnirec_tracer_malformed_lines_total', 'Tracer output lines that could not be parsed', () => deps.tracerStatus().malformedLines);
  total('cnirec_tracer_restarts_total', 'Times the tracer was restarted after it exited', () => deps.tracerStatus().restarts);
  gauge('cnirec_tracer_up', '1 when the tracer runs and has proved it sees execs, else 0', () => {
    const s = deps.tracerStatus();
    return s.running && s.ready ? 1 : 0;
  });
  total('cnirec_tracer_gaps_total', 'Times no tracer recorded: bpftrace went away and was restarted (the current gap included)', () => deps.tracerStatus().gaps);
  total('cnirec_tracer_gap_seconds_total', 'Seconds without a recording tracer, over all gaps (the current one up to now)', () => deps.tracerStatus().gapSeconds);
  gauge(
    'cnirec_tracer_reorder_window_seconds',
    'How far the tracer output must move past a record before it goes on (records of other CPUs may still come): the least the live tail waits',
    () => deps.tracerStatus().reorderWindowMs / 1000,
  );
  gauge('cnirec_tracer_arrival_lag_seconds', 'Largest delay over the last seconds between a tracer record and its arrival in the daemon', () => deps.tracerStatus().arrivalLagMs / 1000);
  gauge('cnirec_tracer_payloads', '1 while the tracer captures stdin/stdout/stderr bytes (full mode, by setting, by auto or by an operator), else 0', () =>
    deps.tracerStatus().mode === 'full' ? 1 : 0,
  );
  registerCaptureInfo(registry, deps);
  gauge('cnirec_store_writable', '1 while the database takes writes, 0 while it refuses them (disk full, read-only): calls then wait in memory', () =>
    deps.storeStatus().writable ? 1 : 0,
  );
  gauge('cnirec_db_size_bytes', 'Size of the SQLite database file (without its WAL)', () => databaseBytes(deps));
  gauge('cnirec_store_pending_writes', 'Calls waiting to be written to the store', () => deps.storeStatus().pendingWrites);
  total('cnirec_store_dropped_writes_total', 'Calls the store gave up writing', () => deps.storeStatus().droppedWrites);
  gauge('cnirec_calls_open', 'Calls the collector has seen start and not yet end', () => deps.collectorStats().openCalls);
  gauge(
    'cnirec_calls_running_oldest_seconds',
    'Age of the oldest plugin call that started and has not exited, 0 when none: a plugin hung for long holds the runtime (its CNI lock, the pod, the node)',
    () => runningAgeSeconds(deps.collectorStats().oldestRunningStartUs),
  );
  new Counter({
    name: 'cnirec_calls_marked_lost_total',
    help:
      'Calls published marked lostRecords (their bytes cannot be vouched for), by the first cause: tracer-lost (bpftrace dropped records: raise --perf-buffer-pages), ' +
      'payload-tracer-cut, payloads-never-came, early-overflow, out-of-order',
    labelNames: ['cause'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [cause, n] of Object.entries(deps.collectorStats().callsMarked)) this.inc({ cause }, n);
    },
  });
  gauge('cnirec_ws_clients', 'Live tail clients connected', () => tailStats()?.clients ?? 0);
  total('cnirec_ws_dropped_clients_total', 'Live tail clients closed for reading too slowly', () => tailStats()?.droppedClients ?? 0);
  total('cnirec_ws_dropped_messages_total', 'Messages those slow tail clients never got', () => tailStats()?.droppedMessages ?? 0);
  if (deps.cache?.status) registerCacheMetrics(registry, deps.cache.status, gauge);
}

/** The CNI cache watcher and its findings, read at scrape time like the rest. */
function registerCacheMetrics(registry: Registry, status: () => CacheStatus, gauge: ScrapedMetric): void {
  gauge('cnirec_cache_watcher_up', '1 when the CNI cache watcher runs, else 0', () => (status().running ? 1 : 0));
  gauge('cnirec_cache_watched_dirs', 'Directories under a file-system watch (result dirs, host-local dirs and their network dirs)', () => status().watchedDirs);
  gauge('cnirec_cache_entries', 'Live libcni cache files the watcher knows', () => status().entries);
  gauge('cnirec_cache_ip_allocations', 'Live host-local reservations the watcher knows', () => status().allocations);
  gauge('cnirec_cache_problems', 'Cache and host-local files or directories the watcher cannot use now', () => status().problems);
  // No sample before the first rescan (rather than a -1 an alert would read as "just now").
  new Gauge({
    name: 'cnirec_cache_last_rescan_age_seconds',
    help: 'Seconds since the last full rescan finished; absent before the first',
    registers: [registry],
    collect() {
      this.reset();
      const at = status().lastRescanAt;
      if (at !== null) this.set((Date.now() - Date.parse(at)) / 1000);
      else noSample(this);
    },
  });
  new Gauge({
    name: 'cnirec_cache_open_findings',
    help: 'Open findings by kind and severity (critical: DEL/ADD loops; warning: broken cache files, stale entries, leaked IPs; info: ADDs without a cache file)',
    labelNames: ['kind', 'severity'],
    registers: [registry],
    collect() {
      this.reset();
      // Every kind always, so a finding resolved to zero reads 0 rather than vanishing.
      const open = status().openFindings;
      for (const kind of FINDING_KINDS) this.set({ kind, severity: FINDING_SEVERITY[kind] }, open[kind] ?? 0);
    },
  });
}

/** Asks the database itself; falls back to the daemon's last known size if the store cannot answer now. */
function databaseBytes(deps: DaemonDeps): number {
  try {
    return deps.store.databaseSizeBytes();
  } catch {
    return deps.storeStatus().databaseBytes;
  }
}

function runningAgeSeconds(startUs: number | null): number {
  return startUs === null ? 0 : Math.max(0, Date.now() / 1000 - startUs / 1_000_000);
}

/** The capture setting as labels (the usual `_info` gauge): which setting is in force and what the tracer runs. */
function registerCaptureInfo(registry: Registry, deps: Pick<DaemonDeps, 'capture' | 'tracerStatus'>): void {
  new Gauge({
    name: 'cnirec_capture_info',
    help: 'The capture setting in force (auto, full, light), the configured one, and the mode the policy wants the tracer in; always 1',
    labelNames: ['setting', 'configured', 'mode'] as const,
    registers: [registry],
    collect() {
      // A daemon without a policy runs the one mode it was given.
      const mode = deps.tracerStatus().mode;
      const s = deps.capture?.status() ?? { setting: mode, configured: mode, mode };
      this.reset();
      this.set({ setting: s.setting, configured: s.configured, mode: s.mode }, 1);
    },
  });
}
