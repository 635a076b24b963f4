/** The exporter's state as /healthz and /metrics show it (the daemon hands `status()` to the API). */

import type { PayloadMode } from '../config/otlp-config.js';

export interface OtelSignalStatus {
  /** Where it goes, without credentials or query. */
  readonly endpoint: string;
  /** Spans or log records the collector accepted. */
  readonly exported: number;
  /** Export requests that failed (after the SDK's own retries); their items stay queued and are sent later. */
  readonly failedExports: number;
  readonly lastError: string | null;
}

export interface OtelExportStatus {
  /** idle: caught up; exporting: sending a backlog; failing: the last attempt failed, retrying with backoff. */
  readonly state: 'idle' | 'exporting' | 'failing';
  readonly payloads: PayloadMode;
  readonly traces: OtelSignalStatus | null;
  readonly logs: OtelSignalStatus | null;
  /** Entries (calls, tracer events, findings) waiting to be sent, for the signal furthest behind. */
  readonly backlog: number;
  /**
   * Entries never sent, by why: the backlog was over its bounds (count or age), retention deleted
   * the row first, or the collector refused the request for good (HTTP 400, or 413 for one entry).
   */
  readonly skipped: { readonly backlogFull: number; readonly tooOld: number; readonly pruned: number; readonly rejected: number };
  /** Since when exports fail (ISO 8601); null while they work. */
  readonly failingSince: string | null;
  readonly lastExportAt: string | null;
  /** From a call's recorded end to the collector's acknowledgement: the last batch's largest, and the largest since start. */
  readonly lagMs: { readonly last: number | null; readonly max: number | null };
}
