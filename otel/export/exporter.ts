/**
 * The export loop: the thin shell around buildBatch and the SDK senders.
 * Reads the outbox after each signal's watermark, sends a batch per signal,
 * and moves a signal's watermark only once the collector accepted its part,
 * so every call is sent exactly once across collector outages and daemon
 * restarts (a crash between the collector's answer and the watermark's
 * commit would send that one batch again).
 *
 * Never on the recording path: the collector's events only schedule a pass
 * (O(1)); a pass runs between other work, one batch at a time, with at most
 * one request per signal in flight. While the collector is unreachable,
 * passes back off (1 s doubling to 30 s), the backlog stays in SQLite within
 * its bounds (count and age; what is skipped is counted), and the outage is
 * logged once when it starts and once when it ends.
 */

import type { ExportOutbox, ExportReads, ExportSignal } from '../../store/index.js';
import type { CallListener } from '../../collector/index.js';
import type { PayloadMode } from '../config/otlp-config.js';
import type { ExportIdentity } from '../map/identity.js';
import { buildBatch, type Batch } from './batch.js';
import { batchOutcome } from './batch-outcome.js';
import { createOutage } from './outage.js';
import { DEFAULT_TUNING, type ExporterTuning } from './tuning.js';
import type { OtelExportStatus, OtelSignalStatus } from './export-status.js';
import type { SendResult, Senders } from './sdk-senders.js';
import { isoFromMs } from '../../lib/index.js';

export interface ExporterLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ExporterOptions {
  readonly outbox: Pick<ExportOutbox, 'watermarks' | 'entriesAfter' | 'advance' | 'waiting' | 'trim'>;
  readonly reads: ExportReads;
  readonly senders: Senders;
  readonly endpoints: { readonly traces: string | null; readonly logs: string | null };
  readonly identity: ExportIdentity;
  readonly payloads: PayloadMode;
  readonly log: ExporterLog;
  readonly now?: () => number;
  readonly tuning?: Partial<ExporterTuning>;
}

export interface OtelExporter {
  /** Subscribe to the collector after the store's listener: a finished (or updated) call schedules a pass. */
  readonly listener: CallListener;
  start(): void;
  /** Schedules a pass soon (coalesced). */
  notify(): void;
  stop(): Promise<void>;
  status(): OtelExportStatus;
}

interface SignalState {
  exported: number;
  failedExports: number;
  lastError: string | null;
}

export function createOtelExporter(opts: ExporterOptions): OtelExporter {
  const tuning: ExporterTuning = { ...DEFAULT_TUNING, ...opts.tuning };
  const now = opts.now ?? Date.now;
  const { outbox, senders, log } = opts;
  const signals = { traces: senders.traces !== null, logs: senders.logs !== null };
  const perSignal: Record<ExportSignal, SignalState> = {
    traces: { exported: 0, failedExports: 0, lastError: null },
    logs: { exported: 0, failedExports: 0, lastError: null },
  };
  const skipped = { backlogFull: 0, tooOld: 0, pruned: 0, rejected: 0 };
  let state: OtelExportStatus['state'] = 'idle';
  const outage = createOutage(tuning.backoffInitialMs, tuning.backoffMaxMs);
  let lastExportAt: number | null = null;
  let lastLagMs: number | null = null;
  let maxLagMs: number | null = null;
  let lastTrimAt = 0;
  let batchEntries = tuning.batchEntries;

  let timer: NodeJS.Timeout | null = null;
  let poll: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopping = false;

  const schedule = (delayMs: number) => {
    if (stopping || timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      void pass();
    }, delayMs);
    timer.unref();
  };

  let lastPassAt = -Infinity;

  const notify = () => {
    // While failing, the backoff timer decides when to try again.
    if (outage.failingSince === null) schedule(Math.max(tuning.coalesceMs, lastPassAt + tuning.minPassIntervalMs - now()));
  };

  const pass = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    lastPassAt = now();
    running = drain()
      .catch((err: unknown) => {
        // A store error (disk, lock) or a bug: say it, keep the daemon, try again later.
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'OpenTelemetry export pass failed; retrying');
        schedule(tuning.backoffMaxMs);
      })
      .finally(() => {
        running = null;
        if (again && !stopping) {
          again = false;
          notify();
        }
      });
    return running;
  };

  const drain = async () => {
    trimIfDue();
    for (;;) {
      if (stopping) return;
      const marks = outbox.watermarks();
      const low = Math.min(marks.traces, marks.logs);
      const entries = outbox.entriesAfter(low, batchEntries);
      if (entries.length === 0) {
        state = 'idle';
        return;
      }
      state = outage.failingSince === null ? 'exporting' : 'failing';
      const batch = buildBatch(entries, marks, opts.reads, {
        payloads: opts.payloads,
        identity: opts.identity,
        signals,
        maxPayloadBytes: tuning.batchPayloadBytes,
      });
      const ok = await send(batch, entries.filter((e) => e.seq <= batch.lastSeq).length);
      if (!ok) {
        schedule(outage.nextDelayMs());
        return;
      }
      // Let the tracer's pipe and the API in between batches of a backlog.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };

  /** Sends each signal's part and moves the watermarks of those done with it; true to go on with the next batch. */
  const send = async (batch: Batch, entryCount: number): Promise<boolean> => {
    const [traces, logs] = await Promise.all([sendPart('traces', batch.spans), sendPart('logs', batch.logs)]);
    const outcome = batchOutcome({ traces, logs }, entryCount);
    outbox.advance(Object.fromEntries(outcome.done.map((signal) => [signal, batch.lastSeq])));
    // Rows gone before they were sent count once, when the batch is done for every signal.
    if (outcome.done.length === 2) skipped.pruned += batch.missing;
    for (const r of outcome.rejected) {
      skipped.rejected += entryCount;
      log.warn({ signal: r.signal, entries: entryCount, err: r.error }, 'the OpenTelemetry collector refused a batch; it is skipped');
    }
    if (outcome.shrink) {
      batchEntries = Math.max(1, Math.floor(entryCount / 2));
      return true;
    }
    if (outcome.retryError !== null) {
      failed(outcome.retryError);
      return false;
    }
    succeeded(batch);
    batchEntries = Math.min(tuning.batchEntries, batchEntries * 2);
    return true;
  };

  const sendPart = async (signal: ExportSignal, items: unknown[]): Promise<SendResult> => {
    const sender = senders[signal];
    // Nothing to send (an off signal, or entries it has no items for): it is done up to here.
    if (sender === null || items.length === 0) return { ok: true };
    const result = await (sender.send as (items: unknown[]) => Promise<SendResult>)(items);
    const s = perSignal[signal];
    if (result.ok) {
      s.exported += items.length;
      s.lastError = null;
    } else {
      s.failedExports++;
      s.lastError = result.error;
    }
    return result;
  };

  const succeeded = (batch: Batch) => {
    const at = now();
    lastExportAt = at;
    if (batch.callEndsUs.length > 0) {
      lastLagMs = Math.max(0, at - Math.min(...batch.callEndsUs) / 1000);
      maxLagMs = Math.max(maxLagMs ?? 0, lastLagMs);
    }
    const ended = outage.succeeded(at);
    if (ended !== null) {
      log.info({ outageSeconds: ended.seconds, failedExports: ended.failures, waiting: waitingEntries() }, 'OpenTelemetry export works again; sending what was recorded meanwhile');
    }
  };

  const failed = (error: string) => {
    state = 'failing';
    // Once per outage, not once per attempt: the state and counters are on /healthz and /metrics.
    if (!outage.failed(now())) return;
    log.warn(
      { err: error, traces: opts.endpoints.traces, logs: opts.endpoints.logs },
      'cannot send to the OpenTelemetry collector; calls stay queued in the database and are sent when it is back',
    );
  };

  const trimIfDue = () => {
    const at = now();
    if (at - lastTrimAt < tuning.pollMs * 10) return;
    lastTrimAt = at;
    const oldEnough = outbox.trim({ maxEntries: Number.MAX_SAFE_INTEGER, minQueuedUs: (at - tuning.maxBacklogAgeMs) * 1000 });
    const tooMany = outbox.trim({ maxEntries: tuning.maxBacklogEntries, minQueuedUs: 0 });
    const aged = Math.max(oldEnough.traces, oldEnough.logs);
    const full = Math.max(tooMany.traces, tooMany.logs);
    skipped.tooOld += aged;
    skipped.backlogFull += full;
    if (aged + full > 0) log.warn({ tooOld: aged, backlogFull: full }, 'OpenTelemetry export skipped calls the collector did not take in time');
  };

  const waitingEntries = (): number => {
    try {
      return Math.max(signals.traces ? outbox.waiting('traces') : 0, signals.logs ? outbox.waiting('logs') : 0);
    } catch {
      return -1;
    }
  };

  const signalStatus = (signal: ExportSignal): OtelSignalStatus | null => {
    const endpoint = opts.endpoints[signal];
    if (endpoint === null || senders[signal] === null) return null;
    return { endpoint, ...perSignal[signal] };
  };

  return {
    listener: {
      onEvents(events) {
        for (const e of events) {
          if (e.type === 'call.finished' || e.type === 'call.updated') {
            notify();
            return;
          }
        }
      },
    },
    start() {
      stopping = false;
      poll = setInterval(notify, tuning.pollMs);
      poll.unref();
      notify();
    },
    notify,
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      timer = null;
      poll = null;
      // A batch in flight commits its watermark if the collector answers in time; otherwise it is sent again at the next start.
      if (running) await Promise.race([running, new Promise((r) => setTimeout(r, tuning.stopWaitMs).unref())]);
      // The SDK's shutdown waits for requests in flight: only when there is none, or the stop would wait for its timeout.
      const shutdown = Promise.allSettled([senders.traces?.shutdown(), senders.logs?.shutdown()]);
      if (!running) await shutdown;
    },
    status() {
      return {
        state,
        payloads: opts.payloads,
        traces: signalStatus('traces'),
        logs: signalStatus('logs'),
        backlog: waitingEntries(),
        skipped: { ...skipped },
        failingSince: outage.failingSince === null ? null : isoFromMs(outage.failingSince),
        lastExportAt: lastExportAt === null ? null : isoFromMs(lastExportAt),
        lagMs: { last: lastLagMs, max: maxLagMs },
      };
    },
  };
}
