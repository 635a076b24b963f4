// The store's one retry policy, for calls, tracer events and cache changes alike: what a full disk refuses waits,
// bounded; what the database refuses on its own merits is dropped alone, never blocking what comes after it.
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../store/db/errors.js';
import { createWriteBehindQueue, type WriteBehindOptions } from '../../store/db/write-behind-queue.js';

const diskFull = () => new StoreError('disk-full', '/db', 'The disk is full.');
const refused = () => new StoreError('internal', '/db', 'CHECK constraint failed.');

/** A database of strings: refuses any batch holding "bad", and everything while `failWith` says so; records each write. */
function fakeDb() {
  const db = {
    rows: [] as string[],
    writes: [] as string[][],
    failWith: null as (() => unknown) | null,
    write(batch: readonly string[]) {
      db.writes.push([...batch]);
      const err = db.failWith?.() ?? (batch.includes('bad') ? refused() : null);
      if (err) throw err;
      db.rows.push(...batch);
    },
  };
  return db;
}

function queueOver(db: ReturnType<typeof fakeDb>, over: Partial<WriteBehindOptions<string>> = {}) {
  const errors: StoreError[] = [];
  const queue = createWriteBehindQueue<string>({
    write: (batch) => db.write(batch),
    onError: (err) => errors.push(err),
    toError: (err) => new StoreError('internal', '', `wrapped: ${String(err)}`),
    maxPending: 100,
    ...over,
  });
  return { queue, errors };
}

describe('the write-behind queue', () => {
  it('writes each batch through, in one write, while the database takes it', () => {
    const db = fakeDb();
    const { queue, errors } = queueOver(db);
    queue.add(['a', 'b']);
    queue.add(['c']);
    expect([db.writes, db.rows, errors, queue.pendingCount]).toEqual([[['a', 'b'], ['c']], ['a', 'b', 'c'], [], 0]);
  });

  it('keeps everything in order through a transient failure and writes it with what comes next', () => {
    const db = fakeDb();
    db.failWith = diskFull;
    const { queue, errors } = queueOver(db);
    queue.add(['a']);
    queue.add(['b']);
    expect([db.rows, queue.pendingCount, queue.flush()]).toEqual([[], 2, false]);
    db.failWith = null;
    queue.add(['c']);
    expect([db.rows, db.writes.at(-1), queue.pendingCount, queue.droppedCount]).toEqual([['a', 'b', 'c'], ['a', 'b', 'c'], 0, 0]);
    expect(errors.map((e) => e.code)).toEqual(['disk-full']);
  });

  it('reports a lasting cause once, a new cause at once, and the same cause again after writes succeeded', () => {
    const db = fakeDb();
    const { queue, errors } = queueOver(db);
    db.failWith = diskFull;
    for (const x of ['a', 'b', 'c']) queue.add([x]);
    db.failWith = () => new StoreError('not-writable', '/db', 'read-only');
    queue.flush();
    db.failWith = null;
    queue.flush();
    db.failWith = diskFull;
    queue.add(['d']);
    expect(errors.map((e) => e.code)).toEqual(['disk-full', 'not-writable', 'disk-full']);
  });

  it('drops only an item the database refuses on its own merits, and writes the rest of its batch in order', () => {
    const db = fakeDb();
    const { queue, errors } = queueOver(db);
    queue.add(['a', 'b', 'bad', 'c', 'd']);
    expect([db.rows, queue.pendingCount, queue.droppedCount]).toEqual([['a', 'b', 'c', 'd'], 0, 1]);
    expect(errors.map((e) => e.message)).toEqual(['CHECK constraint failed.']);
    // Halved, not one write per item: a refused change in a startup scan of thousands of files costs a few writes.
    expect(db.writes.length).toBeLessThanOrEqual(6);
  });

  it('never lets a refused item block what comes after it (head of line)', () => {
    const db = fakeDb();
    const { queue } = queueOver(db, { maxPending: 3 });
    queue.add(['bad']);
    for (let i = 0; i < 10; i++) queue.add([`x${i}`]);
    expect([db.rows.length, queue.pendingCount, queue.droppedCount]).toEqual([10, 0, 1]);
  });

  it('keeps the rest when the disk fails while it looks for a refused item', () => {
    const db = fakeDb();
    const { queue } = queueOver(db);
    let writes = 0;
    db.failWith = () => (++writes >= 3 ? diskFull() : null);
    queue.add(['a', 'bad', 'b', 'c']);
    // [a bad b c] refused, [a bad] refused, then the disk fills: nothing dropped, all kept in order.
    expect([db.rows, queue.pendingCount, queue.droppedCount]).toEqual([[], 4, 0]);
    db.failWith = null;
    queue.flush();
    expect([db.rows, queue.droppedCount]).toEqual([['a', 'b', 'c'], 1]);
  });

  it('bounds what it keeps after a failed write, oldest out first, but writes a large batch whole', () => {
    const db = fakeDb();
    const { queue } = queueOver(db, { maxPending: 3 });
    queue.add(Array.from({ length: 10 }, (_, i) => `ok${i}`));
    expect([db.rows.length, queue.droppedCount]).toEqual([10, 0]);
    db.failWith = diskFull;
    queue.add(['a', 'b', 'c', 'd', 'e']);
    expect([queue.pendingCount, queue.droppedCount]).toEqual([3, 2]);
    db.failWith = null;
    queue.flush();
    expect(db.rows.slice(10)).toEqual(['c', 'd', 'e']);
  });

  it('bounds what the kept items weigh, and merges items of one key in their first place', () => {
    const db = fakeDb();
    db.failWith = diskFull;
    const weight = (s: string) => Number(s.split(':')[1]);
    const { queue } = queueOver(db, { maxPendingBytes: 10, sizeOf: weight, keyOf: (s) => s.split(':')[0]!, merge: (_kept, next) => next });
    queue.add(['a:4', 'b:4']);
    queue.add(['c:4']);
    expect([queue.pendingCount, queue.droppedCount]).toEqual([2, 1]);
    queue.add(['b:5']);
    expect([queue.pendingCount, queue.droppedCount]).toEqual([2, 1]);
    db.failWith = null;
    queue.flush();
    expect(db.rows).toEqual(['b:5', 'c:4']);
  });

  it('writes at most maxBatch items a write', () => {
    const db = fakeDb();
    db.failWith = diskFull;
    const { queue } = queueOver(db, { maxBatch: 1 });
    queue.add(['a', 'b', 'c']);
    db.failWith = null;
    db.writes.length = 0;
    queue.flush();
    expect(db.writes).toEqual([['a'], ['b'], ['c']]);
  });

  it('never throws at the writer: not for a failing report, and reports a foreign error as a StoreError', () => {
    const db = fakeDb();
    db.failWith = () => new TypeError('undefined is not a function');
    const errors: StoreError[] = [];
    const queue = createWriteBehindQueue<string>({
      write: (b) => db.write(b),
      onError: (err) => {
        errors.push(err);
        throw new Error('logger broke');
      },
      toError: (err) => new StoreError('internal', '', `Cannot write: ${String(err)}`),
      maxPending: 10,
    });
    expect(() => queue.add(['a'])).not.toThrow();
    expect(errors[0]).toBeInstanceOf(StoreError);
    expect(errors[0]?.message).toMatch(/undefined is not a function/);
    // Not transient: dropped rather than retried forever.
    expect([queue.pendingCount, queue.droppedCount]).toEqual([0, 1]);
  });
});
