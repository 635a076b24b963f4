/**
 * Giving deleted space back to the disk. Deleting rows only moves pages to
 * the freelist; `PRAGMA incremental_vacuum(n)` (the database is in
 * auto_vacuum=INCREMENTAL, see migration 4) moves up to n pages from the end
 * of the file into free slots, a few at a time so no step holds the write
 * lock for long. In WAL mode those moves land in the WAL first: the main
 * file shrinks when a checkpoint copies them back, and the WAL itself only
 * shrinks on a TRUNCATE checkpoint.
 */

import type { Database } from 'better-sqlite3';
import type { WriteTiming } from '../db/index.js';

export interface CheckpointResult {
  /** Another connection's reader or writer was in the way: the WAL was not (fully) reset. */
  readonly busy: boolean;
  readonly walFrames: number;
  readonly checkpointedFrames: number;
}

export interface Vacuumer {
  /** Hands back up to `pages` free pages; returns how many free pages remain. */
  vacuumStep(pages: number): number;
  /** Copies what it can of the WAL into the database without waiting for anyone. */
  checkpointPassive(): CheckpointResult;
  /**
   * Copies the whole WAL back and truncates it to zero bytes, but only if
   * nobody is in the way right now: it never waits (a CLI `sqlite3` holding
   * a read snapshot must not stall the daemon for busy_timeout).
   */
  checkpointTruncate(): CheckpointResult;
  /** 'incremental' once migration 4 ran; anything else means the file cannot shrink. */
  autoVacuumMode(): 'none' | 'full' | 'incremental';
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

export function createVacuumer(db: Database, timing: WriteTiming): Vacuumer {
  const freelist = db.prepare<[], { freelist_count: number }>('PRAGMA freelist_count');
  const passive = db.prepare<[], CheckpointRow>('PRAGMA wal_checkpoint(PASSIVE)');
  const truncate = db.prepare<[], CheckpointRow>('PRAGMA wal_checkpoint(TRUNCATE)');
  const toResult = (r: CheckpointRow | undefined): CheckpointResult => ({
    busy: (r?.busy ?? 0) !== 0,
    walFrames: r?.log ?? 0,
    checkpointedFrames: r?.checkpointed ?? 0,
  });

  return {
    vacuumStep(pages) {
      const n = Math.max(1, Math.floor(pages));
      // A pragma's argument cannot be bound; n is an integer we computed.
      timing.time('vacuum', () => db.exec(`PRAGMA incremental_vacuum(${n})`));
      return freelist.get()?.freelist_count ?? 0;
    },
    checkpointPassive: () => toResult(timing.time('checkpoint', () => passive.get())),
    checkpointTruncate() {
      const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
      db.pragma('busy_timeout = 0');
      try {
        return toResult(timing.time('checkpoint', () => truncate.get()));
      } catch (err) {
        // SQLITE_BUSY without a handler: someone is in the way; try again later.
        if ((err as { code?: unknown }).code === 'SQLITE_BUSY') return { busy: true, walFrames: -1, checkpointedFrames: -1 };
        throw err;
      } finally {
        db.pragma(`busy_timeout = ${busyTimeout}`);
      }
    },
    autoVacuumMode() {
      const mode = db.pragma('auto_vacuum', { simple: true }) as number;
      return mode === 2 ? 'incremental' : mode === 1 ? 'full' : 'none';
    },
  };
}
