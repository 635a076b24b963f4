// /healthz and /metrics show the OpenTelemetry exporter's state the daemon hands the API:
// nothing when it exports nothing, its counters when it does, and a problem sentence while it fails.
import { afterEach, describe, expect, it } from 'vitest';
import type { OtelExportStatus } from '../../otel/index.js';
import { getJson, startApi, type ApiHarness } from './api-harness.js';

const WORKING: OtelExportStatus = {
  state: 'idle',
  payloads: 'capped',
  traces: { endpoint: 'http://otel-collector:4318/v1/traces', exported: 120, failedExports: 2, lastError: null },
  logs: { endpoint: 'http://otel-collector:4318/v1/logs', exported: 40, failedExports: 1, lastError: null },
  backlog: 0,
  skipped: { backlogFull: 5, tooOld: 1, pruned: 2, rejected: 0 },
  failingSince: null,
  lastExportAt: '2026-01-01T00:00:00.000Z',
  lagMs: { last: 42, max: 900 },
};

const FAILING: OtelExportStatus = {
  ...WORKING,
  state: 'failing',
  traces: { ...WORKING.traces!, lastError: 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:4318' },
  backlog: 17,
  failingSince: '2026-01-01T00:01:00.000Z',
};

let api: ApiHarness | null = null;
afterEach(async () => {
  await api?.close();
  api = null;
});

const valueOf = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('OpenTelemetry export on /healthz and /metrics', () => {
  it('shows null and no metrics when the daemon exports nothing', async () => {
    api = await startApi();
    const { body } = await getJson(api.app, '/healthz');
    expect(body.otel).toBeNull();
    expect((await api.app.inject({ url: '/metrics' })).body).not.toContain('cnirec_otel_');
  });

  it('shows the exporter state and its counters while it works', async () => {
    api = await startApi({ otelStatus: () => WORKING });
    const { body } = await getJson<{ status: string; otel: OtelExportStatus }>(api.app, '/healthz');
    expect(body.status).toBe('ok');
    expect(body.otel).toEqual(WORKING);
    const text = (await api.app.inject({ url: '/metrics' })).body;
    expect(valueOf(text, 'cnirec_otel_export_up')).toBe(1);
    expect(valueOf(text, 'cnirec_otel_spans_exported_total')).toBe(120);
    expect(valueOf(text, 'cnirec_otel_logs_exported_total')).toBe(40);
    expect(valueOf(text, 'cnirec_otel_export_failures_total{signal="traces"}')).toBe(2);
    expect(valueOf(text, 'cnirec_otel_export_failures_total{signal="logs"}')).toBe(1);
    expect(valueOf(text, 'cnirec_otel_skipped_total{reason="backlog_full"}')).toBe(5);
    expect(valueOf(text, 'cnirec_otel_skipped_total{reason="pruned"}')).toBe(2);
    expect(valueOf(text, 'cnirec_otel_backlog')).toBe(0);
    expect(valueOf(text, 'cnirec_otel_export_lag_seconds')).toBe(0.042);
  });

  it('is degraded with a sentence saying what waits while the collector does not take what is sent', async () => {
    api = await startApi({ otelStatus: () => FAILING });
    const { status, body } = await getJson<{ status: string; problems: string[] }>(api.app, '/healthz');
    expect(status).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.problems).toEqual([
      'OpenTelemetry export fails since 2026-01-01T00:01:00.000Z (ECONNREFUSED: connect ECONNREFUSED 10.0.0.9:4318); 17 calls and events wait in the database and are sent when the collector takes them again.',
    ]);
    // Readiness is about recording, which goes on.
    expect((await getJson(api.app, '/healthz?probe=readiness')).status).toBe(200);
    const text = (await api.app.inject({ url: '/metrics' })).body;
    expect(valueOf(text, 'cnirec_otel_export_up')).toBe(0);
    expect(valueOf(text, 'cnirec_otel_backlog')).toBe(17);
  });
});
