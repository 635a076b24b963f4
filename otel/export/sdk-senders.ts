/**
 * The OpenTelemetry SDK's OTLP/HTTP exporters, one per signal, behind a
 * promise-returning `send`. They do the encoding (protobuf or JSON), the
 * transport and the retries of one request (429/502/503/504 and network
 * errors, with backoff, within the timeout); whatever still fails comes
 * back here as a value, and the batch stays in the outbox.
 */

import { OTLPLogExporter as OTLPLogExporterJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as OTLPLogExporterProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as OTLPTraceExporterJson } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPTraceExporterProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { OtlpExportConfig, SignalEndpoint } from '../config/otlp-config.js';

/**
 * `rejected`: the collector refused this request itself (HTTP 400, or 413 for its size), so sending it
 * again cannot help (the OTLP spec says not to retry). Anything else (unreachable, 5xx, 401/403/404
 * of a wrong token or path) is worth retrying once it is fixed.
 */
export type SendResult = { readonly ok: true } | { readonly ok: false; readonly error: string; readonly rejected: 'bad-request' | 'too-large' | null };

export interface SignalSender<T> {
  send(items: T[]): Promise<SendResult>;
  shutdown(): Promise<void>;
}

export interface Senders {
  readonly traces: SignalSender<ReadableSpan> | null;
  readonly logs: SignalSender<ReadableLogRecord> | null;
}

interface SdkExporter<T> {
  export(items: T[], done: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}

type ExporterOptions = NonNullable<ConstructorParameters<typeof OTLPTraceExporterProto>[0]>;

function options(endpoint: SignalEndpoint): ExporterOptions {
  return {
    url: endpoint.url,
    headers: { ...endpoint.headers },
    timeoutMillis: endpoint.timeoutMs,
    compression: endpoint.compression as ExporterOptions['compression'],
    // One request at a time per signal: the export loop never has two in flight.
    concurrencyLimit: 1,
    userAgent: 'cnirec',
  };
}

export function createSdkSenders(config: OtlpExportConfig): Senders {
  const traces = config.traces;
  const logs = config.logs;
  return {
    traces: traces === null ? null : wrap<ReadableSpan>(traces.protocol === 'http/json' ? new OTLPTraceExporterJson(options(traces)) : new OTLPTraceExporterProto(options(traces))),
    logs: logs === null ? null : wrap<ReadableLogRecord>(logs.protocol === 'http/json' ? new OTLPLogExporterJson(options(logs)) : new OTLPLogExporterProto(options(logs))),
  };
}

function wrap<T>(exporter: SdkExporter<T>): SignalSender<T> {
  return {
    send: (items) =>
      new Promise((resolve) => {
        exporter.export(items, (result) => {
          if (result.code === ExportResultCode.SUCCESS) resolve({ ok: true });
          else resolve({ ok: false, error: describe(result.error), rejected: rejectionOf(result.error) });
        });
      }),
    shutdown: () => exporter.shutdown(),
  };
}

function rejectionOf(err: Error | undefined): 'bad-request' | 'too-large' | null {
  const status = (err as { code?: unknown } | undefined)?.code;
  return status === 400 ? 'bad-request' : status === 413 ? 'too-large' : null;
}

/** One line for the log: the SDK's errors carry an HTTP status or a Node error code. */
function describe(err: Error | undefined): string {
  if (err === undefined) return 'export failed';
  const e = err as Error & { code?: unknown };
  const code = typeof e.code === 'number' ? `HTTP ${e.code}` : typeof e.code === 'string' ? e.code : null;
  const message = err.message || 'export failed';
  return code !== null && !message.includes(code) ? `${code}: ${message}` : message;
}
