// The listener between collector and store never throws: writes that fail
// wait in a bounded queue, and calls the database refuses are dropped and counted.
import { describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { StoreError } from '../../store/db/errors.js';
import { createStoreListener } from '../../store/calls/store-listener.js';

// Only ids, event types and payload sizes matter to the listener.
const payload = (n = 0) => ({ bytes: Buffer.alloc(n), totalBytes: n, truncated: false });
const call = (id: string, bytes = 0) => ({ id, stdin: payload(bytes), stdout: payload(), stderr: payload(), helpers: [] }) as unknown as CniCall;
const started = (id: string): CollectorEvent => ({ type: 'call.started', call: call(id) });
const finished = (id: string, bytes = 0): CollectorEvent => ({ type: 'call.finished', call: call(id, bytes) });

const diskFull = () => new StoreError('disk-full', '/db', 'The disk is full.');

/** A store whose writes fail while `failWith` returns an error; records what it was given. */
function fakeStore(failWith: (events: readonly CollectorEvent[]) => unknown = () => null) {
  const written: string[] = [];
  return {
    written,
    failWith,
    writeEvents(events: readonly CollectorEvent[]) {
      const err = this.failWith(events);
      if (err) throw err;
      written.push(...events.map((e) => `${e.type === 'call.started' ? 's' : 'f'}:${e.call.id}`));
    },
  };
}

describe('the store listener', () => {
  it('writes events straight through while the store works', () => {
    const store = fakeStore();
    const listener = createStoreListener(store, () => {
      throw new Error('no error expected');
    });
    listener.onEvents([started('a'), started('b')]);
    listener.onEvents([finished('a')]);
    expect(store.written).toEqual(['s:a', 's:b', 'f:a']);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([0, 0]);
  });

  it('does not throw when the disk is full, keeps the events and writes them once there is room', () => {
    let full = true;
    const store = fakeStore(() => (full ? diskFull() : null));
    const errors: StoreError[] = [];
    const listener = createStoreListener(store, (err) => errors.push(err));
    expect(() => listener.onEvents([started('a'), started('b')])).not.toThrow();
    expect(() => listener.onEvents([finished('a')])).not.toThrow();
    expect(listener.pendingCount).toBe(2);
    full = false;
    listener.onEvents([started('c')]);
    // a's started was folded into its finished: one write per call.
    expect(store.written).toEqual(['f:a', 's:b', 's:c']);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([0, 0]);
  });

  it('reports a lasting outage once, and again after a recovery', () => {
    let full = true;
    const store = fakeStore(() => (full ? diskFull() : null));
    const errors: StoreError[] = [];
    const listener = createStoreListener(store, (err) => errors.push(err));
    for (let i = 0; i < 5; i++) listener.onEvents([started(`a${i}`)]);
    expect(errors.map((e) => e.code)).toEqual(['disk-full']);
    full = false;
    listener.onEvents([]);
    full = true;
    listener.onEvents([started('b')]);
    expect(errors.map((e) => e.code)).toEqual(['disk-full', 'disk-full']);
  });

  it('drops the oldest calls beyond its bound and counts them', () => {
    const store = fakeStore(() => diskFull());
    const listener = createStoreListener(store, () => {}, { maxPending: 3 });
    listener.onEvents(['a', 'b', 'c', 'd', 'e'].map(started));
    expect([listener.pendingCount, listener.droppedCount]).toEqual([3, 2]);
    store.failWith = () => null;
    expect(listener.flush()).toBe(true);
    expect(store.written).toEqual(['s:c', 's:d', 's:e']);
  });

  it('drops the oldest calls when their payloads pass the byte bound', () => {
    const store = fakeStore(() => diskFull());
    const listener = createStoreListener(store, () => {}, { maxPendingBytes: 10_000 });
    listener.onEvents([finished('a', 4_000), finished('b', 4_000)]);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([2, 0]);
    listener.onEvents([finished('c', 4_000)]);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([2, 1]);
    // A call's finish replacing its own earlier snapshot is counted once, at its new size.
    listener.onEvents([finished('c', 5_000)]);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([2, 1]);
    store.failWith = () => null;
    listener.flush();
    expect(store.written).toEqual(['f:b', 'f:c']);
  });

  it('defaults to a bound of 10,000 calls', () => {
    const listener = createStoreListener(fakeStore(() => diskFull()), () => {});
    listener.onEvents(Array.from({ length: 10_005 }, (_, i) => started(`c${i}`)));
    expect([listener.pendingCount, listener.droppedCount]).toEqual([10_000, 5]);
  });

  it('drops only the calls the database refuses, and writes the rest of their batch', () => {
    const refused = new StoreError('internal', '/db', 'CHECK constraint failed.');
    const store = fakeStore((events) => (events.some((e) => e.call.id === 'bad') ? refused : null));
    const errors: StoreError[] = [];
    const listener = createStoreListener(store, (err) => errors.push(err));
    listener.onEvents([started('a'), started('bad'), started('b')]);
    expect(store.written).toEqual(['s:a', 's:b']);
    expect([listener.pendingCount, listener.droppedCount]).toEqual([0, 1]);
    expect(errors).toContain(refused);
  });

  it('hands onError a StoreError even when the store throws something else', () => {
    const store = fakeStore(() => new TypeError('undefined is not a function'));
    const errors: StoreError[] = [];
    createStoreListener(store, (err) => errors.push(err)).onEvents([started('a')]);
    expect(errors[0]).toBeInstanceOf(StoreError);
    expect(errors[0]?.message).toMatch(/undefined is not a function/);
  });

  it('survives an onError that throws', () => {
    const listener = createStoreListener(fakeStore(() => diskFull()), () => {
      throw new Error('logger broke');
    });
    expect(() => listener.onEvents([started('a')])).not.toThrow();
    expect(listener.pendingCount).toBe(1);
  });

  it('says whether anything is left when flushed', () => {
    const store = fakeStore(() => diskFull());
    const listener = createStoreListener(store, () => {});
    expect(listener.flush()).toBe(true);
    listener.onEvents([started('a')]);
    expect(listener.flush()).toBe(false);
    store.failWith = () => null;
    expect(listener.flush()).toBe(true);
  });
});
