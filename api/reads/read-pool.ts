/**
 * The read routes' work in worker threads, each with its own read-only
 * connection to the database (read-worker.ts). The main thread keeps the
 * collector (bpftrace's output, the reorder window, the live tail) and the
 * writes; a burst of pod stories or 1,000-call pages no longer holds them
 * up, and reads use the node's other CPUs. A request goes to the worker
 * with the fewest in flight. While no worker is up (starting, or replaced
 * after it died) reads run on the main thread's own connection, so the API
 * never stops answering.
 *
 * Answers come back through memory shared with the worker: each worker has
 * CELLS cells of CELL_BYTES, one lent to each request in flight, and the
 * worker writes a JSON body that fits into its cell instead of posting it.
 * A posted Buffer arrives on the main thread as a new ArrayBuffer outside
 * V8's heap, and with no garbage of its own to collect young, the main
 * thread then ran a mark-compact every ~200 ms to free them (5-9 ms each,
 * 120 in 28 s of pod stories), which put the read workers' p99 at twice the
 * main thread's own (bench/README.md, "Read isolation"). The main thread
 * copies a cell into its own twin of it, allocated once: fastify sends
 * only bytes on an ArrayBuffer as they are (it would JSON-encode a view of
 * shared memory). A cell and its twin are lent until the response closes.
 */

import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { ReadOp, ReadOps } from './read-ops.js';
import { inlineReads, readsFrom, type ReadAnswer, type Reads } from './reads.js';
import { fromWireError, type WireError } from './wire-error.js';

export interface ReadPoolOptions {
  readonly dbFile: string;
  readonly workers: number;
  /** Whether the daemon watches CNI caches (the cache routes answer 501 when not). */
  readonly cacheWatched: boolean;
  /** Reads on the main thread's connection while no worker is up. */
  readonly fallback: ReadOps;
  readonly log: Logger;
  /** The worker's script: read-worker.js beside this module unless given. */
  readonly workerFile?: URL | string;
}

export interface ReadPoolStatus {
  readonly workers: number;
  /** Workers up and answering. */
  readonly ready: number;
  readonly inFlight: number;
  /** Workers that died and were replaced since the daemon started. */
  readonly restarts: number;
  /** Reads run on the main thread because no worker was up. */
  readonly fallbackReads: number;
  /** Cells lent to answers not yet sent: more than the requests in flight for long means responses that never closed. */
  readonly lentCells: number;
}

export interface ReadPool extends Reads {
  status(): ReadPoolStatus;
  /** Stops the workers; reads in flight are answered with an error. */
  close(): Promise<void>;
}

/** What a worker is sent, and what it answers. */
export interface ReadRequest {
  readonly id: number;
  readonly op: ReadOp;
  readonly args: readonly unknown[];
  /** The cell of the shared answers lent to this request; null when none was free. */
  readonly cell: number | null;
}
export type ReadReply =
  | { readonly type: 'ready' }
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  /** The body is the first `cellBytes` bytes of the request's cell. */
  | { readonly id: number; readonly ok: true; readonly cellBytes: number }
  | { readonly id: number; readonly ok: false; readonly error: WireError };
export interface ReadWorkerData {
  readonly dbFile: string;
  readonly cacheWatched: boolean;
  /** CELLS × CELL_BYTES, shared with the pool. */
  readonly answers: SharedArrayBuffer;
  readonly cellBytes: number;
}

/** A pod's busiest week (~550 KiB) and a page of 1,000 calls fit; a bigger body is posted instead. */
export const CELL_BYTES = 1024 * 1024;
/** Requests in flight per worker that get a cell; more are answered by posting. A cell and its twin are 2 MiB of RSS once used. */
const CELLS = 8;

interface Pending {
  readonly cell: number | null;
  resolve(answer: ReadAnswer<unknown>): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker | null;
  ready: boolean;
  readonly inFlight: Map<number, Pending>;
  /** Deaths since it last answered: the restart backoff. */
  failures: number;
  /** Kept across restarts: a cell may still be lent to a response being sent. */
  readonly answers: SharedArrayBuffer;
  /** The main thread's copy of each cell, what the response sends. */
  readonly twins: Buffer;
  readonly freeCells: number[];
}

const keep = (): void => undefined;

const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 5_000;

/**
 * A worker's V8 heap, measured with pod stories and pages on the
 * 1,000,000-call data set (bench/README.md, "Read isolation"). V8 sizes a
 * worker's young generation from its old-generation cap, which left it at a
 * few MiB: most of a story's garbage was promoted and the old generation
 * grew to its cap. 48 MiB, the main thread's default, lets it die young
 * (16 and 32 cost ~0.5-1 ms more at p99). The old generation keeps room for
 * a call with three 4 MiB payloads, as base64 and as text.
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 48, maxOldGenerationSizeMb: 128 } as const;

export function createReadPool(opts: ReadPoolOptions): ReadPool {
  const file = opts.workerFile ?? new URL('./read-worker.js', import.meta.url);
  const inline = inlineReads(opts.fallback);
  const slots: Slot[] = Array.from({ length: Math.max(1, opts.workers) }, () => ({
    worker: null,
    ready: false,
    inFlight: new Map(),
    failures: 0,
    answers: new SharedArrayBuffer(CELLS * CELL_BYTES),
    twins: Buffer.allocUnsafeSlow(CELLS * CELL_BYTES),
    freeCells: Array.from({ length: CELLS }, (_, i) => i),
  }));
  const restartTimers = new Set<NodeJS.Timeout>();
  let nextId = 1;
  let closing = false;
  let restarts = 0;
  let fallbackReads = 0;
  let lastStartError: string | null = null;

  const start = (slot: Slot) => {
    const workerData: ReadWorkerData = { dbFile: opts.dbFile, cacheWatched: opts.cacheWatched, answers: slot.answers, cellBytes: CELL_BYTES };
    const worker = new Worker(file, { workerData, resourceLimits: WORKER_HEAP });
    worker.unref();
    slot.worker = worker;
    slot.ready = false;
    worker.on('message', (reply: ReadReply) => {
      if ('type' in reply) {
        slot.ready = true;
        if (lastStartError !== null) opts.log.info('API read workers are up again');
        lastStartError = null;
        return;
      }
      const pending = slot.inFlight.get(reply.id);
      if (!pending) return;
      slot.inFlight.delete(reply.id);
      slot.failures = 0;
      const { cell } = pending;
      const giveBack = () => {
        if (cell !== null) slot.freeCells.push(cell);
      };
      if (!reply.ok) {
        giveBack();
        pending.reject(fromWireError(reply.error));
      } else if ('cellBytes' in reply && cell !== null) {
        let lent = true;
        const release = () => {
          if (lent) giveBack();
          lent = false;
        };
        const at = cell * CELL_BYTES;
        const body = slot.twins.subarray(at, at + reply.cellBytes);
        body.set(new Uint8Array(slot.answers, at, reply.cellBytes));
        pending.resolve({ body, release });
      } else {
        giveBack();
        pending.resolve({ body: 'value' in reply ? fromWire(reply.value) : undefined, release: keep });
      }
    });
    let why = 'it exited';
    worker.on('error', (err) => {
      why = err.message;
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      slot.ready = false;
      const lost = new Error(`the API read worker stopped (${why}, exit code ${code}) while answering`);
      for (const p of slot.inFlight.values()) {
        if (p.cell !== null) slot.freeCells.push(p.cell);
        p.reject(lost);
      }
      slot.inFlight.clear();
      if (closing) return;
      restarts++;
      // Said once per cause: a database that cannot be opened would otherwise fill the log at every retry.
      if (why !== lastStartError) opts.log.error({ why, code }, 'an API read worker stopped; reads run on the main thread until it is replaced');
      lastStartError = why;
      const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** slot.failures++);
      const timer = setTimeout(() => {
        restartTimers.delete(timer);
        if (!closing) start(slot);
      }, delay);
      timer.unref();
      restartTimers.add(timer);
    });
  };
  for (const slot of slots) start(slot);

  const run =
    <K extends ReadOp>(op: K) =>
    (...args: Parameters<ReadOps[K]>): Promise<ReadAnswer<ReturnType<ReadOps[K]>>> => {
      let best: Slot | null = null;
      for (const s of slots) if (s.ready && s.worker && (best === null || s.inFlight.size < best.inFlight.size)) best = s;
      if (best === null || best.worker === null) {
        fallbackReads++;
        return inline[op](...args);
      }
      const id = nextId++;
      const slot = best;
      const cell = slot.freeCells.pop() ?? null;
      return new Promise<ReadAnswer<unknown>>((resolve, reject) => {
        slot.inFlight.set(id, { cell, resolve, reject });
        const request: ReadRequest = { id, op, args, cell };
        slot.worker!.postMessage(request);
      }) as Promise<ReadAnswer<ReturnType<ReadOps[K]>>>;
    };

  return {
    ...readsFrom(run),
    status: () => ({
      workers: slots.length,
      ready: slots.filter((s) => s.ready).length,
      inFlight: slots.reduce((n, s) => n + s.inFlight.size, 0),
      restarts,
      fallbackReads,
      lentCells: slots.reduce((n, s) => n + CELLS - s.freeCells.length, 0),
    }),
    async close() {
      closing = true;
      for (const t of restartTimers) clearTimeout(t);
      restartTimers.clear();
      await Promise.all(slots.map((s) => s.worker?.terminate()));
    },
  };
}

/** A posted Buffer comes across as a Uint8Array (structured clone): the same bytes, seen as a Buffer again without a copy. */
function fromWire(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}
