/**
 * The read routes' port: every ReadOp as a promise, answered either in a
 * pool of worker threads (read-pool.ts, the daemon) or on the calling
 * thread (inlineReads: tests, an in-memory store, and the pool's fallback
 * while no worker is up).
 */

import type { ReadOp, ReadOps } from './read-ops.js';

export type Reads = { readonly [K in ReadOp]: (...args: Parameters<ReadOps[K]>) => Promise<ReturnType<ReadOps[K]>> };

/** Runs each read at once on this thread. */
export function inlineReads(ops: ReadOps): Reads {
  const run =
    <K extends ReadOp>(op: K) =>
    async (...args: Parameters<ReadOps[K]>): Promise<ReturnType<ReadOps[K]>> =>
      (ops[op] as (...a: Parameters<ReadOps[K]>) => ReturnType<ReadOps[K]>)(...args);
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
