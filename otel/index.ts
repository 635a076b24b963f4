/**
 * OpenTelemetry export: calls as spans (inside the runtime's trace when it
 * passed a TRACEPARENT), a log record per call, tracer gaps and findings as
 * log records, sent over OTLP from the store's outbox. See README.md here.
 */

export { resolveOtlpConfig, OtlpConfigError, PAYLOAD_MODES, type OtlpExportConfig, type OtlpSettings, type PayloadMode, type SignalEndpoint } from './config/otlp-config.js';
export { createOtelExporter, type ExporterLog, type ExporterOptions, type OtelExporter } from './export/exporter.js';
export { DEFAULT_TUNING, type ExporterTuning } from './export/tuning.js';
export { createSdkSenders, type SendResult, type Senders, type SignalSender } from './export/sdk-senders.js';
export type { OtelExportStatus, OtelSignalStatus } from './export/export-status.js';
export { exportIdentity, DEFAULT_SERVICE_NAME, type ExportIdentity } from './map/identity.js';
export { CAPPED_PAYLOAD_BYTES } from './map/payload.js';
export { createOtelExport, type OtelExportOptions } from './otel-export.js';
