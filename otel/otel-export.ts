/**
 * The export, assembled over the daemon's database: the outbox starts
 * queueing at once (so calls the startup sweep marks incomplete are sent
 * too), the exporter's passes begin with start().
 */

import type { Database } from 'better-sqlite3';
import { createExportOutbox, createExportReads } from '../store/index.js';
import type { OtlpExportConfig } from './config/otlp-config.js';
import { createOtelExporter, type ExporterLog, type OtelExporter } from './export/exporter.js';
import type { ExporterTuning } from './export/tuning.js';
import { createSdkSenders, type Senders } from './export/sdk-senders.js';
import { exportIdentity } from './map/identity.js';

export interface OtelExportOptions {
  readonly db: Database;
  readonly config: OtlpExportConfig;
  /** cnirec's version, for service.version. */
  readonly version: string;
  readonly hostName: string;
  readonly log: ExporterLog;
  readonly tuning?: Partial<ExporterTuning>;
  /** The SDK's exporters unless a test brings its own. */
  readonly senders?: Senders;
}

export function createOtelExport(opts: OtelExportOptions): OtelExporter {
  const outbox = createExportOutbox(opts.db);
  outbox.startQueueing();
  const { config } = opts;
  return createOtelExporter({
    outbox,
    reads: createExportReads(opts.db),
    senders: opts.senders ?? createSdkSenders(config),
    endpoints: { traces: config.traces?.displayUrl ?? null, logs: config.logs?.displayUrl ?? null },
    identity: exportIdentity({ version: opts.version, hostName: opts.hostName, attributes: config.resourceAttributes }),
    payloads: config.payloads,
    log: opts.log,
    ...(opts.tuning ? { tuning: opts.tuning } : {}),
  });
}
