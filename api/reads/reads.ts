/**
 * The read routes' port: every ReadOp as a promise of its answer, computed
 * either in a pool of worker threads (read-pool.ts, the daemon) or on the
 * calling thread (inlineReads: tests, an in-memory store, and the pool's
 * fallback while no worker is up).
 */

import type { ReadOp, ReadOps } from './read-ops.js';

/** A read's body, and what to call once it has been sent: a worker's answer may sit in memory it writes the next one into. */
export interface ReadAnswer<T> {
  readonly body: T;
  release(): void;
}

export type Reads = { readonly [K in ReadOp]: (...args: Parameters<ReadOps[K]>) => Promise<ReadAnswer<ReturnType<ReadOps[K]>>> };

const keep = (): void => undefined;

/** Runs each read at once on this thread; its answer holds nothing to release. */
export function inlineReads(ops: ReadOps): Reads {
  const run =
    <K extends ReadOp>(op: K) =>
    async (...args: Parameters<ReadOps[K]>): Promise<ReadAnswer<ReturnType<ReadOps[K]>>> => ({
      body: (ops[op] as (...a: Parameters<ReadOps[K]>) => ReturnType<ReadOps[K]>)(...args),
      release: keep,
    });
  return {
    callPage: run('callPage'),
    callDetail: run('callDetail'),
    replayScript: run('replayScript'),
    podStory: run('podStory'),
    cacheEntries: run('cacheEntries'),
    ipHistory: run('ipHistory'),
    findings: run('findings'),
  };
}
