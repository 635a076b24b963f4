/**
 * What one cache watcher event does to the stored rows, decided apart from
 * the statements that do it (cache-writer.ts). Pure: the live rows it
 * compares against are arguments.
 */

import type { IpAllocation } from '../../collector/index.js';

/** From this many events on, a batch preloads the live rows instead of looking each one up. */
export const PRELOAD_AT = 64;

export const preloadsLiveRows = (batchSize: number): boolean => batchSize >= PRELOAD_AT;

/**
 * A version of a cache file against the live row of its path: the same bytes
 * again only refresh last_seen ('touch'), other bytes close the live row and
 * open a new one ('replace'), a file without a live row opens one ('insert').
 */
export function versionChange(
  live: { readonly id: number; readonly digest: string } | undefined,
  digest: string,
): { readonly kind: 'touch' | 'replace'; readonly liveId: number } | { readonly kind: 'insert' } {
  if (live === undefined) return { kind: 'insert' };
  return { kind: live.digest === digest ? 'touch' : 'replace', liveId: live.id };
}

/** The open host-local row of a reservation file: who held the address. */
export interface OpenReservation {
  readonly container_id: string | null;
  readonly if_name: string | null;
}

export type ReservationChange =
  | { readonly kind: 'unchanged' }
  /** Open a row from `fromMs`; first close the open one of another holder when `releaseFirst`. */
  | { readonly kind: 'open'; readonly releaseFirst: boolean; readonly fromMs: number };

/**
 * A host-local reservation seen at `atMs` against the open row of its file.
 * The same holder again changes nothing; a new holder starts when host-local
 * reserved the address (the file's mtime, also for files found at startup),
 * or now when it takes over from another holder or the mtime is unknown.
 */
export function reservationChange(open: OpenReservation | undefined, a: Pick<IpAllocation, 'containerId' | 'ifName' | 'mtimeMs'>, atMs: number): ReservationChange {
  if (open && open.container_id === a.containerId && open.if_name === a.ifName) return { kind: 'unchanged' };
  return { kind: 'open', releaseFirst: open !== undefined, fromMs: open || a.mtimeMs <= 0 ? atMs : Math.min(atMs, Math.round(a.mtimeMs)) };
}

/** Rows under a reconciled directory whose file is not among those found there: gone while cnirec was not watching. */
export const goneFromDisk = <R extends { readonly path: string }>(rows: readonly R[], livePaths: ReadonlySet<string>): R[] => rows.filter((r) => !livePaths.has(r.path));
