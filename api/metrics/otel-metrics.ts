/**
 * OpenTelemetry export as metrics, read at scrape time from the exporter's
 * status: what went out, what failed and was retried, what was skipped and
 * why, how much waits, and how far behind the calls it is.
 */

import { Counter, type Registry } from 'prom-client';
import type { OtelExportStatus } from '../../otel/index.js';
import { scrapedMetrics } from './scraped-metrics.js';

const SKIP_REASONS: Record<keyof OtelExportStatus['skipped'], string> = {
  backlogFull: 'backlog_full',
  tooOld: 'too_old',
  pruned: 'pruned',
  rejected: 'rejected',
};

export function registerOtelMetrics(registry: Registry, status: () => OtelExportStatus): void {
  const { gauge, total } = scrapedMetrics(registry);
  gauge('cnirec_otel_export_up', '1 while OpenTelemetry export works (or has nothing to send), 0 while it fails and retries', () => (status().failingSince === null ? 1 : 0));
  total('cnirec_otel_spans_exported_total', 'Spans the OpenTelemetry collector accepted (calls, delegated calls, helper processes)', () => status().traces?.exported ?? 0);
  total('cnirec_otel_logs_exported_total', 'Log records the OpenTelemetry collector accepted (calls, tracer events, findings)', () => status().logs?.exported ?? 0);
  new Counter({
    name: 'cnirec_otel_export_failures_total',
    help: 'OTLP export requests that failed after their retries, by signal; what they carried stays queued and is sent again',
    labelNames: ['signal'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = status();
      if (s.traces) this.inc({ signal: 'traces' }, s.traces.failedExports);
      if (s.logs) this.inc({ signal: 'logs' }, s.logs.failedExports);
    },
  });
  new Counter({
    name: 'cnirec_otel_skipped_total',
    help: 'Calls and events never exported, by reason: backlog_full and too_old (over the backlog bounds during an outage), pruned (deleted by retention first), rejected (refused by the collector for good)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const skipped = status().skipped;
      for (const [key, reason] of Object.entries(SKIP_REASONS)) this.inc({ reason }, skipped[key as keyof typeof skipped]);
    },
  });
  gauge('cnirec_otel_backlog', 'Calls and events recorded and not yet exported', () => Math.max(0, status().backlog));
  gauge('cnirec_otel_export_lag_seconds', "From a call's recorded end to the collector's acknowledgement, for the oldest call of the last batch sent (-1 before the first)", () => {
    const last = status().lagMs.last;
    return last === null ? -1 : last / 1000;
  });
}
