/**
 * The decisions retention takes, apart from the timers and transactions that
 * carry them out (retention.ts): when a run is due, how much the size limit
 * counts and how far it deletes, what a size-limited run does next (STATUS
 * heartbeats before pod calls), how many STATUS calls a network keeps, how
 * long a run yields after each step, and how the WAL is bounded. Pure: the
 * sizes and times are arguments.
 */

import type { DatabaseSize } from '../db/index.js';

/**
 * Size deletion starts at this fraction of the limit, and deletes down to
 * the low-water mark, not just under it: ingest keeps writing while a run
 * works and until the next size check, and the next run then has room for
 * that instead of deleting a sliver each time (and the file over the limit).
 */
export const HIGH_WATER_MARK = 0.95;
export const LOW_WATER_MARK = 0.85;

/**
 * What the size limit counts: pages in use plus the WAL's budget. Free
 * pages count as gone (the vacuum hands them back), and the WAL as its
 * budget, not its size of the moment, so deleting needs no checkpoint per
 * batch to see its progress.
 */
export const countedBytes = (size: Pick<DatabaseSize, 'fileBytes' | 'freeBytes'>, walBudgetBytes: number): number => size.fileBytes - size.freeBytes + walBudgetBytes;

/** Whether the size limit (0: none) wants data deleted now. */
export const overHighWater = (counted: number, maxDbBytes: number): boolean => maxDbBytes > 0 && counted > maxDbBytes * HIGH_WATER_MARK;

/** Where a size-limited run stops deleting. */
export const sizeTarget = (maxDbBytes: number): number => Math.floor(maxDbBytes * LOW_WATER_MARK);

/**
 * The passes over the calls a size-limited run makes, in order, each oldest
 * first. STATUS heartbeats go before any pod call: a network that stays
 * NotReady keeps ~17,000 failing STATUS calls a day per plugin, and they must
 * never push a pod's ADD or DEL out while one of them is left. Among them,
 * the calls the readiness timeline names (a transition's call) go last.
 */
export const SIZE_CALL_PASSES = ['status', 'status-in-timeline', 'calls'] as const;
export type SizeCallPass = (typeof SIZE_CALL_PASSES)[number];
export type SizeStep = 'done' | SizeCallPass | 'history';

/**
 * What a size-limited run does next, until under the target: the first
 * pass over the calls that still has something to delete, then closed history.
 */
export function nextSizeStep(counted: number, targetBytes: number, passesDone: ReadonlySet<SizeCallPass>): SizeStep {
  if (counted <= targetBytes) return 'done';
  return SIZE_CALL_PASSES.find((p) => !passesDone.has(p)) ?? 'history';
}

/**
 * STATUS calls kept per network (the newest, plus any a readiness
 * transition names), whatever the size: every run deletes the older ones.
 * A long outage's failing answers are mostly the same answer again, and the
 * ones that matter are kept anyway: where it started (its transition) and
 * the latest. 1,000 is over an hour of one plugin's answers every 5 s.
 */
export const STATUS_CALLS_PER_NETWORK = 1_000;

/**
 * Whether a timer tick starts a run: the interval has passed since the last
 * one ended, or the size limit cannot wait (`overSize` costs a few pragmas,
 * so it is asked only when the interval has not passed).
 */
export const runDue = (sinceLastRunMs: number, intervalMs: number, overSize: () => boolean): boolean => sinceLastRunMs >= intervalMs || overSize();

/** How often the size is looked at between runs: a flood can fill the database faster than the interval. */
export const checkEveryMs = (sizeCheckMs: number, intervalMs: number): number => Math.min(sizeCheckMs, intervalMs);

/**
 * How long a run gives the event loop after a step that took `tookMs`: at
 * least as long as the step, so retention never takes more than half of the
 * daemon's time; 0 (the next turn) after a step under a millisecond.
 */
export const yieldAfterStepMs = (tookMs: number): number => (tookMs >= 1 ? tookMs : 0);

export interface WalBounds {
  /** What the size limit reserves for the WAL. */
  readonly budgetBytes: number;
  /** A lower wal_autocheckpoint (pages) to set, or null to keep what open-database chose. */
  readonly autocheckpointPages: number | null;
  /** A lower journal_size_limit (bytes) to set, or null to keep it. */
  readonly journalSizeLimit: number | null;
}

/**
 * The WAL is disk the database takes, and in WAL mode it sits at its high
 * water mark between checkpoints: at SQLite's defaults (1000 pages, here
 * 16 MiB) it alone would be half of a 32 MiB limit. So a size limit also
 * bounds the WAL to a sixteenth of it (between 1 and 16 MiB): checkpoint
 * after that much (smaller checkpoints are also shorter stalls), and cut the
 * file back to it after each one. Only ever lowers the current settings.
 */
export function walBounds(maxDbBytes: number, pageSize: number, current: { autocheckpointPages: number; journalSizeLimit: number }): WalBounds {
  const budgetBytes = Math.min(16 * 1024 * 1024, Math.max(1024 * 1024, Math.floor(maxDbBytes / 16)));
  const pages = Math.max(16, Math.floor(budgetBytes / pageSize));
  return {
    budgetBytes,
    autocheckpointPages: current.autocheckpointPages <= 0 || pages < current.autocheckpointPages ? pages : null,
    journalSizeLimit: current.journalSizeLimit < 0 || budgetBytes < current.journalSizeLimit ? budgetBytes : null,
  };
}
