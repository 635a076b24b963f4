/**
 * How big the database is, the way retention counts it: the pages that hold
 * data plus the WAL. Free pages are left out because they are reused before
 * the file grows and incremental vacuum hands them back to the disk; the WAL
 * is in because it is disk the database takes (up to journal_size_limit
 * after a checkpoint, more while a long reader pins it).
 */

import fs from 'node:fs';
import type { Database } from 'better-sqlite3';

export interface DatabaseSize {
  /** page_count × page_size: the main file as SQLite sees it. */
  readonly fileBytes: number;
  /** Pages on the freelist: reusable, and what incremental vacuum can give back. */
  readonly freeBytes: number;
  readonly walBytes: number;
  /** fileBytes − freeBytes + walBytes: what the size limit is checked against. */
  readonly usedBytes: number;
  readonly pageSize: number;
  readonly freePages: number;
}

export interface SizeMeter {
  measure(): DatabaseSize;
}

export function createSizeMeter(db: Database): SizeMeter {
  const pageCount = db.prepare<[], { page_count: number }>('PRAGMA page_count');
  const pageSize = db.prepare<[], { page_size: number }>('PRAGMA page_size');
  const freelist = db.prepare<[], { freelist_count: number }>('PRAGMA freelist_count');
  const wal = db.memory ? null : `${db.name}-wal`;
  return {
    measure() {
      const size = pageSize.get()?.page_size ?? 0;
      const fileBytes = (pageCount.get()?.page_count ?? 0) * size;
      const freePages = freelist.get()?.freelist_count ?? 0;
      const walBytes = wal === null ? 0 : fileSizeOrZero(wal);
      const freeBytes = freePages * size;
      return { fileBytes, freeBytes, walBytes, usedBytes: fileBytes - freeBytes + walBytes, pageSize: size, freePages };
    },
  };
}

function fileSizeOrZero(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    // No WAL yet, or just truncated away.
    return 0;
  }
}
