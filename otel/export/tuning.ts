/** The export loop's knobs: sizes, waits and bounds, with the defaults the daemon runs (tests shorten the waits). */

export interface ExporterTuning {
  /** Outbox entries per batch. */
  readonly batchEntries: number;
  /** Payload bytes per batch (a request stays well under collectors' 4-20 MiB limits). */
  readonly batchPayloadBytes: number;
  /** Wait after a finished call before a pass, so a burst goes out in one batch. */
  readonly coalesceMs: number;
  /**
   * Least time between the starts of two passes. Each pass costs a fixed ~1 ms of the daemon's thread (two
   * HTTP requests, a watermark commit) whatever it carries: at 100 calls/s, a pass per call cost more than
   * the calls themselves (bench/results/otel-export.md); this batches them, for at most this much lag.
   */
  readonly minPassIntervalMs: number;
  /** A pass also runs this often, for what no collector event announces (tracer events, findings, the startup sweep). */
  readonly pollMs: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Backlog bounds: entries beyond these are skipped, oldest first, and counted. */
  readonly maxBacklogEntries: number;
  readonly maxBacklogAgeMs: number;
  /** How long stop() waits for a request in flight before leaving it to the next start. */
  readonly stopWaitMs: number;
}

export const DEFAULT_TUNING: ExporterTuning = {
  batchEntries: 256,
  batchPayloadBytes: 2 * 1024 * 1024,
  coalesceMs: 20,
  minPassIntervalMs: 100,
  pollMs: 1_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 30_000,
  maxBacklogEntries: 100_000,
  maxBacklogAgeMs: 24 * 3_600_000,
  stopWaitMs: 2_000,
};
