/**
 * The read routes' port: every ReadOp as a promise of its answer, computed
 * either in a pool of worker threads (read-pool.ts, the daemon) or on the
 * calling thread (inlineReads: tests, an in-memory store, and the pool's
 * fallback while no worker is up).
 */

import { READ_OPS, type ReadOp, type ReadOps } from './read-ops.js';

/** A read's body, and what to call once it has been sent: a worker's answer may sit in memory it writes the next one into. */
export interface ReadAnswer<T> {
  readonly body: T;
  release(): void;
}

/** One read, asked for: its op's arguments, a promise of its op's answer. */
export type Read<K extends ReadOp> = (...args: Parameters<ReadOps[K]>) => Promise<ReadAnswer<ReturnType<ReadOps[K]>>>;

export type Reads = { readonly [K in ReadOp]: Read<K> };

/** A Reads object whose every read is `run(op)`. */
export function readsFrom(run: <K extends ReadOp>(op: K) => Read<K>): Reads {
  return Object.fromEntries(READ_OPS.map((op) => [op, run(op)])) as unknown as Reads;
}

const keep = (): void => undefined;

/** Runs each read at once on this thread; its answer holds nothing to release. */
export function inlineReads(ops: ReadOps): Reads {
  const run =
    <K extends ReadOp>(op: K) =>
    async (...args: Parameters<ReadOps[K]>): Promise<ReadAnswer<ReturnType<ReadOps[K]>>> => ({
      body: (ops[op] as (...a: Parameters<ReadOps[K]>) => ReturnType<ReadOps[K]>)(...args),
      release: keep,
    });
  return readsFrom(run);
}
