/** The OpenTelemetry export's store side: the outbox and its watermarks, and the rows an entry points at. */

export { createExportOutbox, EXPORT_SIGNALS, type ExportOutbox, type ExportSignal, type OutboxBounds, type OutboxEntry, type OutboxKind, type Watermarks } from './export-outbox.js';
export { createExportReads, type CallTraceKey, type ExportReads } from './export-reads.js';
