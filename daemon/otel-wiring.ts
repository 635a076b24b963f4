/**
 * OpenTelemetry export in the daemon: built right after the database opens
 * (the outbox must queue before the startup sweep marks the last run's
 * calls incomplete), subscribed to the collector after the store's writer,
 * started once the API listens, stopped before the database closes.
 */

import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { createOtelExport, type OtelExporter, type OtlpExportConfig } from '../otel/index.js';

export function createOtelWiring(db: Database, config: OtlpExportConfig | null, log: Logger): OtelExporter | null {
  if (config === null) return null;
  const exporter = createOtelExport({
    db,
    config,
    version: cnirecVersion(),
    hostName: hostname(),
    log: {
      info: (obj, msg) => log.info(obj, msg),
      warn: (obj, msg) => log.warn(obj, msg),
      error: (obj, msg) => log.error(obj, msg),
    },
  });
  log.info(
    { traces: config.traces?.displayUrl ?? null, logs: config.logs?.displayUrl ?? null, protocol: (config.traces ?? config.logs)?.protocol, payloads: config.payloads },
    'exporting calls over OTLP',
  );
  return exporter;
}

/** package.json's version, found upward from this file (dist/daemon/ when built, daemon/ under the tests). */
function cnirecVersion(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'cnirec' && pkg.version) return pkg.version;
      } catch {
        // not ours; keep looking
      }
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
