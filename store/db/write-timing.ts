/**
 * How long the store's write transactions hold the database, per connection.
 * better-sqlite3 is synchronous: while a write runs, the daemon's event loop
 * (the tracer's pipe, the API, the tail) waits for it, so the longest write
 * is the longest stall. Kept per connection rather than passed down, because
 * every writer on a connection (calls, cache, retention) shares that one lock
 * and that one loop; a WeakMap lets a closed connection's numbers go with it.
 */

import type { Database } from 'better-sqlite3';
import { createTopic, isoFromMs } from '../../lib/index.js';

/** What the write was, for the metrics label. */
export type WriteKind = 'calls' | 'cache' | 'tracer-events' | 'retention' | 'vacuum' | 'checkpoint' | 'migration';

export type WriteObserver = (kind: WriteKind, seconds: number) => void;

export interface WriteTimingStats {
  readonly writes: number;
  /** Longest single write since the connection opened, in seconds. */
  readonly maxSeconds: number;
  readonly maxKind: WriteKind | null;
  /** When that longest write ended (ISO 8601); null before the first write. */
  readonly maxAt: string | null;
}

export interface WriteTiming {
  stats(): WriteTimingStats;
  /** Follows every write from now on (metrics); returns the unsubscribe. */
  observe(observer: WriteObserver): () => void;
  /** Runs `fn` and records how long it took, also when it throws. */
  time<T>(kind: WriteKind, fn: () => T): T;
}

const timings = new WeakMap<Database, WriteTiming>();

export function writeTimingFor(db: Database): WriteTiming {
  let timing = timings.get(db);
  if (!timing) {
    timing = createWriteTiming();
    timings.set(db, timing);
  }
  return timing;
}

export function createWriteTiming(now: () => bigint = process.hrtime.bigint): WriteTiming {
  // An observer (metrics) failing must never fail a write that succeeded.
  const observers = createTopic<WriteObserver>(() => undefined);
  let writes = 0;
  let maxSeconds = 0;
  let maxKind: WriteKind | null = null;
  let maxAt: string | null = null;

  const record = (kind: WriteKind, seconds: number) => {
    writes++;
    if (seconds > maxSeconds || maxKind === null) {
      maxSeconds = seconds;
      maxKind = kind;
      maxAt = isoFromMs(Date.now());
    }
    observers.publish((o) => o(kind, seconds));
  };

  return {
    stats: () => ({ writes, maxSeconds, maxKind, maxAt }),
    observe: (observer) => observers.subscribe(observer),
    time(kind, fn) {
      const start = now();
      try {
        return fn();
      } finally {
        record(kind, Number(now() - start) / 1e9);
      }
    },
  };
}
