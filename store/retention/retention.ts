/**
 * Keeps the database within a maximum age and a maximum size, continuously:
 * a run every few seconds deletes what is too old and each network's STATUS
 * calls past the newest it keeps, then, while the database is over its size
 * limit, the oldest STATUS calls and only then the oldest calls of any kind
 * (see retention-policy.ts, retention-prune.ts), then hands the freed pages
 * back to the disk (retention-vacuum.ts). Every step is a short transaction
 * and the run yields to the event loop between them, so ingest, the API and
 * the tail keep going while it works.
 *
 * Deleting because of size means losing history earlier than the operator
 * asked for: each such run is recorded as a tracer event (`retention-size`)
 * and reported through `onRun`, so it is never silent.
 */

import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { isoFromMs, isoFromUs } from '../../lib/index.js';
import { createSizeMeter, type DatabaseSize, toStoreError, type StoreError, writeTimingFor } from '../db/index.js';
import {
  HISTORY_TABLES,
  NO_CUTOFF,
  addCounts,
  createPruner,
  zeroCounts,
  type CallPosition,
  type RetentionCounts,
} from './retention-prune.js';
import {
  STATUS_CALLS_PER_NETWORK,
  checkEveryMs,
  countedBytes,
  nextSizeStep,
  overHighWater,
  runDue,
  sizeTarget,
  walBounds,
  yieldAfterStepMs,
  type SizeCallPass,
} from './retention-policy.js';
import { createVacuumer } from './retention-vacuum.js';
import { createTracerEventLog } from '../tracer-events/index.js';

export type { RetentionCounts } from './retention-prune.js';

export interface RetentionLimits {
  /** Delete data older than this; 0: keep forever. */
  readonly maxAgeMs: number;
  /** Keep pages in use plus the WAL under this; 0: no limit. */
  readonly maxDbBytes: number;
}

export interface RetentionOptions extends RetentionLimits {
  /** Pause between the end of one run and the start of the next. */
  readonly intervalMs?: number;
  /** How often the size is checked in between, to start a run early when over the limit. */
  readonly sizeCheckMs?: number;
  /** Rows (calls, or history rows) one transaction deletes at most. */
  readonly batchRows?: number;
  /** Time one call-deleting transaction may take before it commits what it has. */
  readonly batchBudgetMs?: number;
  /** Free pages one incremental_vacuum step gives back. */
  readonly vacuumStepPages?: number;
  /** STATUS calls each network keeps, the newest (those a readiness transition names are kept too); 0: no cap. */
  readonly statusCallsPerNetwork?: number;
  /** Wall clock in ms, for the age cutoff (tests move it). */
  readonly now?: () => number;
  readonly onRun?: (run: RetentionRun) => void;
  readonly onError?: (err: StoreError) => void;
}

export interface RetentionRun {
  readonly startedAt: string;
  readonly durationMs: number;
  readonly deleted: RetentionCounts;
  /** Of `deleted`: STATUS calls (with their delegates) past the newest their network keeps, and their helpers. */
  readonly statusCapped: Pick<RetentionCounts, 'calls' | 'helpers'>;
  /** The size limit made this run delete data younger than the age limit. */
  readonly bySize: boolean;
  /** Still over the size limit with nothing left it may delete (calls in flight, live cache state). */
  readonly overLimit: boolean;
  readonly sizeBeforeBytes: number;
  readonly sizeAfterBytes: number;
  /** When the oldest call still stored started (ISO 8601); null when none is. */
  readonly oldestCallAt: string | null;
  /** Transactions (deletes, vacuum steps, checkpoints) the run took, and the longest. */
  readonly steps: number;
  readonly longestStepMs: number;
}

export interface RetentionStatus extends RetentionLimits {
  readonly enabled: boolean;
  readonly intervalMs: number;
  /** A run is in progress now. */
  readonly running: boolean;
  readonly lastRun: RetentionRun | null;
  readonly lastError: string | null;
  readonly runs: number;
  /** Runs that deleted early because of the size limit. */
  readonly sizeRuns: number;
  readonly deletedTotal: RetentionCounts;
  readonly size: DatabaseSize;
  /** 'incremental' is what lets the file shrink; anything else is reported, not fixed at runtime. */
  readonly autoVacuum: 'none' | 'full' | 'incremental';
}

export interface RetentionWorker {
  start(): void;
  /** Runs once now (or waits for the run in progress); tests and the benchmark call it. */
  runOnce(): Promise<RetentionRun | null>;
  status(): RetentionStatus;
  /** Stops scheduling and waits for a run in progress to stop between steps. */
  stop(): Promise<void>;
}

const DEFAULT_INTERVAL_MS = 10_000;
const DEFAULT_SIZE_CHECK_MS = 1_000;
const DEFAULT_BATCH_ROWS = 100;
const DEFAULT_BATCH_BUDGET_MS = 10;
// 32 pages of 16 KiB: 512 KiB moved per step, a few ms on any disk.
const DEFAULT_VACUUM_STEP_PAGES = 32;

export function createRetentionWorker(db: Database, opts: RetentionOptions): RetentionWorker {
  const intervalMs = opts.intervalMs ?? DEFAULT_INTERVAL_MS;
  const sizeCheckMs = opts.sizeCheckMs ?? DEFAULT_SIZE_CHECK_MS;
  const batchRows = opts.batchRows ?? DEFAULT_BATCH_ROWS;
  const batchBudgetMs = opts.batchBudgetMs ?? DEFAULT_BATCH_BUDGET_MS;
  const vacuumStepPages = opts.vacuumStepPages ?? DEFAULT_VACUUM_STEP_PAGES;
  const statusCallsPerNetwork = opts.statusCallsPerNetwork ?? STATUS_CALLS_PER_NETWORK;
  const now = opts.now ?? Date.now;
  const enabled = opts.maxAgeMs > 0 || opts.maxDbBytes > 0;

  const timing = writeTimingFor(db);
  const pruner = createPruner(db);
  const vacuumer = createVacuumer(db, timing);
  const meter = createSizeMeter(db);
  const tracerEvents = createTracerEventLog(db);
  const walBudgetBytes = opts.maxDbBytes > 0 ? boundWal(db, opts.maxDbBytes) : 0;

  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let inFlight: Promise<RetentionRun | null> | null = null;
  let lastRun: RetentionRun | null = null;
  let lastError: string | null = null;
  let runs = 0;
  let sizeRuns = 0;
  const deletedTotal = zeroCounts();

  /** One run's bookkeeping: counts, steps, and yielding between steps. */
  const createRun = () => {
    const deleted = zeroCounts();
    let steps = 0;
    let longestStepMs = 0;
    return {
      deleted,
      get steps() {
        return steps;
      },
      get longestStepMs() {
        return longestStepMs;
      },
      /** Runs one transaction, counts it, then yields to the event loop (yieldAfterStepMs): ingest keeps up even on a busy machine. */
      async step<T>(fn: () => T): Promise<T> {
        const t0 = performance.now();
        const result = fn();
        const took = performance.now() - t0;
        steps++;
        longestStepMs = Math.max(longestStepMs, took);
        const pause = yieldAfterStepMs(took);
        if (pause > 0) await sleep(pause);
        else await nextTurn();
        return result;
      },
    };
  };
  type Run = ReturnType<typeof createRun>;

  const limits = { maxRows: batchRows, budgetMs: batchBudgetMs };

  /** One short transaction deleting the oldest call trees (of the pass: all, or STATUS ones) that started before the cutoff. */
  const callBatch = (run: Run, cutoffUs: number, position: CallPosition | null, pass: SizeCallPass = 'calls') =>
    run.step(() => timing.time('retention', () => pruner.deleteCallTrees(cutoffUs, position, limits, pass)));

  /** Each network keeps its newest STATUS calls, and those its readiness timeline names; the older ones go, whatever the size. */
  const capStatusCalls = async (run: Run): Promise<Pick<RetentionCounts, 'calls' | 'helpers'>> => {
    const capped = { calls: 0, helpers: 0 };
    if (statusCallsPerNetwork <= 0) return capped;
    const overflowing = await run.step(() => pruner.statusOverflow(statusCallsPerNetwork));
    for (const { network, through } of overflowing) {
      let position: CallPosition | null = null;
      while (!stopped) {
        const batch = await run.step(() => timing.time('retention', () => pruner.deleteStatusTreesThrough(network, through, position, limits)));
        addCounts(run.deleted, { calls: batch.calls, helpers: batch.helpers });
        capped.calls += batch.calls;
        capped.helpers += batch.helpers;
        position = batch.position;
        if (batch.exhausted) break;
      }
    }
    return capped;
  };

  /** Deletes every call tree older than the cutoff, batch by batch. */
  const deleteCalls = async (run: Run, cutoffUs: number): Promise<void> => {
    let position: CallPosition | null = null;
    while (!stopped) {
      const batch = await callBatch(run, cutoffUs, position);
      addCounts(run.deleted, { calls: batch.calls, helpers: batch.helpers });
      position = batch.position;
      if (batch.exhausted) return;
    }
  };

  /** Deletes closed history older than the cutoff in every table; returns the rows deleted. */
  const deleteHistory = async (run: Run, cutoffMs: number, oneBatch: boolean): Promise<number> => {
    let total = 0;
    for (const table of HISTORY_TABLES) {
      for (;;) {
        if (stopped) return total;
        const n = await run.step(() => timing.time('retention', () => pruner.deleteHistory(table, cutoffMs, batchRows)));
        addCounts(run.deleted, { [table]: n });
        total += n;
        if (n < batchRows || oneBatch) break;
      }
    }
    return total;
  };

  /**
   * Gives free pages back in small steps. Each step's moves land in the WAL;
   * SQLite's own auto-checkpoint (on commit, past wal_autocheckpoint pages)
   * copies them back and shrinks the main file as it goes, and the run's
   * final TRUNCATE checkpoint does the rest.
   */
  const vacuum = async (run: Run): Promise<void> => {
    // Without incremental auto-vacuum the step is a no-op: free pages are only reused.
    if (vacuumer.autoVacuumMode() !== 'incremental') return;
    let free = meter.measure().freePages;
    while (free > 0 && !stopped) {
      const left = await run.step(() => vacuumer.vacuumStep(vacuumStepPages));
      if (left >= free) return; // no progress: never spin
      free = left;
    }
  };

  /** Resets the WAL if nobody is reading it, then measures (the end of a run). */
  const settledSize = async (run: Run): Promise<DatabaseSize> => {
    await run.step(() => vacuumer.checkpointTruncate());
    return meter.measure();
  };

  /**
   * Over the limit: deletes the oldest STATUS calls, then the oldest calls of any kind, then closed history,
   * until what the limit counts is under its target (retention-policy.ts).
   */
  const runSizeLimit = async (run: Run): Promise<{ bySize: boolean; overLimit: boolean }> => {
    const counted = () => countedBytes(meter.measure(), walBudgetBytes);
    if (!overHighWater(counted(), opts.maxDbBytes)) return { bySize: false, overLimit: false };
    const target = sizeTarget(opts.maxDbBytes);
    const passesDone = new Set<SizeCallPass>();
    let pass: SizeCallPass | null = null;
    let position: CallPosition | null = null;
    for (let step = nextSizeStep(counted(), target, passesDone); step !== 'done' && !stopped; step = nextSizeStep(counted(), target, passesDone)) {
      if (step !== 'history') {
        // Each pass walks the calls from the oldest again.
        if (step !== pass) [pass, position] = [step, null];
        const batch = await callBatch(run, NO_CUTOFF, position, step);
        addCounts(run.deleted, { calls: batch.calls, helpers: batch.helpers });
        position = batch.position;
        if (batch.exhausted) passesDone.add(step);
        // History older than every call kept goes too: it explains nothing that is still there.
        const horizonUs = pruner.oldestCallStartUs();
        if (horizonUs !== null) await deleteHistory(run, Math.floor(horizonUs / 1000), true);
      } else if ((await deleteHistory(run, NO_CUTOFF, true)) === 0) {
        // Only calls in flight and the node's live cache state are left.
        return { bySize: true, overLimit: counted() > opts.maxDbBytes };
      }
    }
    return { bySize: true, overLimit: false };
  };

  const runOnce = async (): Promise<RetentionRun | null> => {
    if (!enabled || stopped) return null;
    const run = createRun();
    const startedMs = now();
    const t0 = performance.now();
    const sizeBefore = meter.measure().usedBytes;
    if (opts.maxAgeMs > 0) {
      const cutoffMs = startedMs - opts.maxAgeMs;
      await deleteCalls(run, cutoffMs * 1000);
      await deleteHistory(run, cutoffMs, false);
    }
    const statusCapped = await capStatusCalls(run);
    const { bySize, overLimit } = opts.maxDbBytes > 0 ? await runSizeLimit(run) : { bySize: false, overLimit: false };
    // Whatever the deletes freed goes back to the disk; then the WAL is reset when nobody reads it.
    await vacuum(run);
    const after = await settledSize(run);
    const oldestUs = pruner.oldestCallStartUs();
    const result: RetentionRun = {
      startedAt: isoFromMs(startedMs),
      durationMs: performance.now() - t0,
      deleted: run.deleted,
      statusCapped,
      bySize,
      overLimit,
      sizeBeforeBytes: sizeBefore,
      sizeAfterBytes: after.usedBytes,
      oldestCallAt: oldestUs === null ? null : isoFromUs(oldestUs),
      steps: run.steps,
      longestStepMs: run.longestStepMs,
    };
    if (bySize) {
      sizeRuns++;
      // Operators must be able to tell, later, why history stops where it does.
      timing.time('tracer-events', () =>
        tracerEvents.recordTracerEvent(
          'retention-size',
          {
            maxDbBytes: opts.maxDbBytes,
            sizeBeforeBytes: sizeBefore,
            sizeAfterBytes: after.usedBytes,
            deleted: run.deleted,
            oldestCallAt: result.oldestCallAt,
            overLimit,
          },
          now() * 1000,
        ),
      );
    }
    return result;
  };

  const guardedRun = (): Promise<RetentionRun | null> => {
    inFlight ??= runOnce()
      .then((r) => {
        if (r) {
          runs++;
          lastRun = r;
          lastError = null;
          addCounts(deletedTotal, r.deleted);
          opts.onRun?.(r);
        }
        return r;
      })
      .catch((err: unknown) => {
        const e = toStoreError(err, db.name, 'apply retention to');
        // Once per cause: a full disk fails every run until space returns.
        if (e.message !== lastError) opts.onError?.(e);
        lastError = e.message;
        return null;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  /** Cheap (three pragmas and a stat): whether the size limit needs a run before the interval is up. */
  const overSize = () => opts.maxDbBytes > 0 && overHighWater(countedBytes(meter.measure(), walBudgetBytes), opts.maxDbBytes);

  let lastRunEndMs = Number.NEGATIVE_INFINITY;
  const schedule = (delayMs: number) => {
    if (stopped || !enabled) return;
    timer = setTimeout(() => {
      timer = null;
      // A flood can fill the database faster than the interval: the size is checked every second in between.
      if (!runDue(performance.now() - lastRunEndMs, intervalMs, overSize)) {
        schedule(checkEveryMs(sizeCheckMs, intervalMs));
        return;
      }
      void guardedRun().then(() => {
        lastRunEndMs = performance.now();
        schedule(checkEveryMs(sizeCheckMs, intervalMs));
      });
    }, delayMs);
    // The daemon is kept alive by its server and tracer, not by housekeeping.
    timer.unref();
  };

  return {
    start() {
      if (timer === null) schedule(0);
    },
    runOnce: guardedRun,
    status: () => ({
      maxAgeMs: opts.maxAgeMs,
      maxDbBytes: opts.maxDbBytes,
      enabled,
      intervalMs,
      running: inFlight !== null,
      lastRun,
      lastError,
      runs,
      sizeRuns,
      deletedTotal: { ...deletedTotal },
      size: meter.measure(),
      autoVacuum: vacuumer.autoVacuumMode(),
    }),
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
}

/** Applies walBounds (retention-policy.ts) to the connection; returns the WAL budget in bytes, which the size limit reserves. */
function boundWal(db: Database, maxDbBytes: number): number {
  const bounds = walBounds(maxDbBytes, db.pragma('page_size', { simple: true }) as number, {
    autocheckpointPages: db.pragma('wal_autocheckpoint', { simple: true }) as number,
    journalSizeLimit: db.pragma('journal_size_limit', { simple: true }) as number,
  });
  const pages = bounds.autocheckpointPages;
  if (pages !== null) db.pragma(`wal_autocheckpoint = ${pages}`);
  const budget = bounds.journalSizeLimit;
  if (budget !== null) db.pragma(`journal_size_limit = ${budget}`);
  return bounds.budgetBytes;
}
