/**
 * A read worker (see read-pool.ts): its own read-only connection to the
 * daemon's database and the read routes' work (read-ops.ts), one request
 * at a time. A body that fits goes into the cell of shared memory the pool
 * lent the request; anything else is posted. Says `ready` once the database
 * is open; if it cannot be opened, the worker ends with that error and the
 * pool tries again later.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { createCacheReader, createFindingsReader } from '../../store/cache/cache-reader.js';
import { createCallReader, openReadConnection } from '../../store/index.js';
import type { ReadReply, ReadRequest, ReadWorkerData } from './read-pool.js';
import { createReadOps, type ReadOps } from './read-ops.js';
import { toWireError } from './wire-error.js';

const port = parentPort;
if (port === null) throw new Error('read-worker.js runs as a worker thread of the daemon (see read-pool.ts), not on its own');
const { dbFile, cacheWatched, answers, cellBytes } = workerData as ReadWorkerData;
const cells = Buffer.from(answers);
const db = openReadConnection(dbFile);
const ops = createReadOps({ store: createCallReader(db), cache: cacheWatched ? createCacheReader(db) : null, findings: createFindingsReader(db) });

port.on('message', ({ id, op, args, cell }: ReadRequest) => {
  let reply: ReadReply;
  try {
    const value = (ops[op] as (...a: readonly unknown[]) => ReturnType<ReadOps[typeof op]>)(...args);
    if (cell !== null && Buffer.isBuffer(value) && value.length <= cellBytes) {
      value.copy(cells, cell * cellBytes);
      reply = { id, ok: true, cellBytes: value.length };
    } else {
      reply = { id, ok: true, value };
    }
  } catch (err) {
    reply = { id, ok: false, error: toWireError(err) };
  }
  port.postMessage(reply);
});
port.postMessage({ type: 'ready' } satisfies ReadReply);

