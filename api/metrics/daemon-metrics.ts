/**
 * Numbers the daemon already keeps (tracer, store, collector, tail), read at
 * scrape time rather than mirrored on every change. Totals the daemon keeps
 * are exposed as counters, set to the daemon's value on each scrape.
 */

import { Counter, Gauge, type Registry } from 'prom-client';
import type { TailStats } from '../tail/tail-stats.js';
import type { ApiDeps } from '../app.js';

type DaemonDeps = Pick<ApiDeps, 'tracerStatus' | 'collectorStats' | 'storeStatus' | 'store'>;

export function registerDaemonMetrics(registry: Registry, deps: DaemonDeps, tailStats: () => TailStats | null): void {
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  // prom-client counters only go up by inc(): restart from zero and add the daemon's total.
  const total = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(Math.max(0, value()));
      },
    });

  total('cnirec_tracer_lost_events_total', 'Records the tracer reported lost (perf buffer overruns)', () => deps.tracerStatus().lostEvents);
  total('cnirec_tracer_malformed_lines_total', 'Tracer output lines that could not be parsed', () => deps.tracerStatus().malformedLines);
  total('cnirec_tracer_restarts_total', 'Times the tracer was restarted after it exited', () => deps.tracerStatus().restarts);
  gauge('cnirec_tracer_up', '1 when the tracer runs and has proved it sees execs, else 0', () => {
    const s = deps.tracerStatus();
    return s.running && s.ready ? 1 : 0;
  });
  gauge('cnirec_db_size_bytes', 'Size of the SQLite database file (without its WAL)', () => databaseBytes(deps));
  gauge('cnirec_store_pending_writes', 'Calls waiting to be written to the store', () => deps.storeStatus().pendingWrites);
  total('cnirec_store_dropped_writes_total', 'Calls the store gave up writing', () => deps.storeStatus().droppedWrites);
  gauge('cnirec_calls_open', 'Calls the collector has seen start and not yet end', () => deps.collectorStats().openCalls);
  gauge('cnirec_ws_clients', 'Live tail clients connected', () => tailStats()?.clients ?? 0);
  total('cnirec_ws_dropped_clients_total', 'Live tail clients closed for reading too slowly', () => tailStats()?.droppedClients ?? 0);
  total('cnirec_ws_dropped_messages_total', 'Messages those slow tail clients never got', () => tailStats()?.droppedMessages ?? 0);
}

/** Asks the database itself; falls back to the daemon's last known size if the store cannot answer now. */
function databaseBytes(deps: DaemonDeps): number {
  try {
    return deps.store.databaseSizeBytes();
  } catch {
    return deps.storeStatus().databaseBytes;
  }
}
