/**
 * Writes that must never fail their caller: the collector has to keep
 * tracing, the cache watcher watching, whatever happens to the disk. Items
 * are written as they come; what the database does not take waits here,
 * bounded, and is written with the next items or the next `flush()`. One
 * policy for every such queue (calls, tracer events, cache changes):
 *
 * - A transient failure (disk full, read-only, locked, I/O error: the data
 *   was fine, the disk was not) keeps everything, in order, for later.
 * - A failure of the data itself (a value the schema refuses) would fail the
 *   same batch forever and block every later item behind it: the batch is
 *   halved until the refused items are alone, which are dropped and counted,
 *   and everything else is written, in order.
 * - Past `maxPending` items (or `maxPendingBytes` of them) kept after a
 *   failed write, the oldest are dropped and counted: history traded for a
 *   daemon that stays up.
 * - A failure is reported once per cause while it lasts (and again when the
 *   cause changes or after writes have succeeded), not once per batch.
 */

import { StoreError, isTransientStoreError } from './errors.js';

export interface WriteBehindOptions<T> {
  /** Writes a batch in order, all of it or none of it (one transaction); throws when the database refuses. */
  readonly write: (batch: readonly T[]) => void;
  /** Told about a failure, once per cause (see above); never allowed to throw at the writer. */
  readonly onError: (err: StoreError) => void;
  /** What a failure that is no StoreError (a test double, a bug) is reported as. */
  readonly toError: (thrown: unknown) => StoreError;
  /** Items kept after a failed write; the oldest beyond this are dropped. */
  readonly maxPending: number;
  /** With `sizeOf`: what the kept items may weigh (payload bytes), the oldest beyond it dropped. */
  readonly maxPendingBytes?: number;
  readonly sizeOf?: (item: T) => number;
  /** Items with one key share a slot, where `merge` decides which of two to keep (a call's started and finished events). */
  readonly keyOf?: (item: T) => string;
  readonly merge?: (kept: T, next: T) => T;
  /** Items one write takes at most (default: all that wait). */
  readonly maxBatch?: number;
}

export interface WriteBehindQueue<T> {
  /** Queues `items` after what waits, writes what it can, then bounds what is left. Never throws. */
  add(items: readonly T[]): void;
  /** Writes what waits now (a timer, shutdown); true when nothing is left. */
  flush(): boolean;
  /** Items waiting to be written. */
  readonly pendingCount: number;
  /** Items given up on: pushed out of a full queue, or refused by the database itself. */
  readonly droppedCount: number;
}

export function createWriteBehindQueue<T>(opts: WriteBehindOptions<T>): WriteBehindQueue<T> {
  const maxBatch = opts.maxBatch ?? Number.POSITIVE_INFINITY;
  const maxBytes = opts.maxPendingBytes ?? Number.POSITIVE_INFINITY;
  const sizeOf = opts.sizeOf ?? (() => 0);
  // In arrival order; Map.set on a key already there keeps its place, so a merged item stays where its slot was.
  const pending = new Map<unknown, T>();
  let sequence = 0;
  let pendingBytes = 0;
  let dropped = 0;
  let lastReported: string | null = null;

  const report = (err: StoreError) => {
    // Internal errors are bugs of one kind or another: each message is its own cause.
    const cause = `${err.code}:${err.code === 'internal' ? err.message : ''}`;
    if (cause === lastReported) return;
    lastReported = cause;
    try {
      opts.onError(err);
    } catch {
      // Reporting failing must not fail the writer either.
    }
  };

  const put = (item: T) => {
    const key = opts.keyOf ? opts.keyOf(item) : sequence++;
    const before = pending.get(key);
    const after = before === undefined || !opts.merge ? item : opts.merge(before, item);
    if (after === before) return;
    pending.set(key, after);
    pendingBytes += sizeOf(after) - (before === undefined ? 0 : sizeOf(before));
  };

  const remove = (key: unknown) => {
    const item = pending.get(key);
    if (item === undefined) return;
    pending.delete(key);
    pendingBytes -= sizeOf(item);
  };

  const trim = () => {
    for (const key of pending.keys()) {
      if (pending.size <= opts.maxPending && pendingBytes <= maxBytes) break;
      remove(key);
      dropped++;
    }
  };

  /** Writes the items of `keys` in order; false when a transient failure stopped it (the rest waits). */
  const write = (keys: readonly unknown[], failed: { value: boolean }): boolean => {
    try {
      opts.write(keys.map((k) => pending.get(k)!));
      for (const k of keys) remove(k);
      return true;
    } catch (thrown) {
      failed.value = true;
      const err = thrown instanceof StoreError ? thrown : opts.toError(thrown);
      report(err);
      if (isTransientStoreError(err)) return false;
      if (keys.length === 1) {
        remove(keys[0]);
        dropped++;
        return true;
      }
      // Refused on its own merits somewhere in there: find it, write everything else.
      const half = Math.ceil(keys.length / 2);
      return write(keys.slice(0, half), failed) && write(keys.slice(half), failed);
    }
  };

  const flush = (): boolean => {
    if (pending.size === 0) return true;
    const keys = [...pending.keys()];
    const failed = { value: false };
    for (let i = 0; i < keys.length; i += maxBatch) {
      if (!write(keys.slice(i, i + maxBatch), failed)) break;
    }
    // Writing went through cleanly: the next failure is a new outage, worth saying again.
    if (!failed.value) lastReported = null;
    return pending.size === 0;
  };

  return {
    add(items) {
      for (const item of items) put(item);
      flush();
      trim();
    },
    flush,
    get pendingCount() {
      return pending.size;
    },
    get droppedCount() {
      return dropped;
    },
  };
}
