// Tracer events survive a disk outage: kept in order, written when the disk is back, bounded and counted.
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../store/db/errors.js';
import { createTracerEventQueue } from '../../store/tracer-events/tracer-event-queue.js';

function fakeStore() {
  const written: string[] = [];
  return {
    written,
    fail: null as StoreError | null,
    recordTracerEvent(kind: string) {
      if (this.fail) throw this.fail;
      written.push(kind);
    },
  };
}

describe('the tracer event queue', () => {
  it('keeps events while the disk is full and writes them in order once it is back, reporting the outage', () => {
    const store = fakeStore();
    const errors: string[] = [];
    const q = createTracerEventQueue(store, (e) => errors.push(e.code));
    store.fail = new StoreError('disk-full', '/db', 'full');
    q.record('gap-started', {}, 1);
    q.record('restarted', {}, 2);
    expect([store.written, q.pendingCount]).toEqual([[], 2]);
    store.fail = null;
    expect(q.flush()).toBe(true);
    expect(store.written).toEqual(['gap-started', 'restarted']);
    expect(errors[0]).toBe('disk-full');
  });

  it('drops the oldest beyond its bound and counts them', () => {
    const store = fakeStore();
    store.fail = new StoreError('not-writable', '/db', 'read-only');
    const q = createTracerEventQueue(store, () => undefined, 2);
    for (const k of ['a', 'b', 'c']) q.record(k, {}, 0);
    store.fail = null;
    q.flush();
    expect([store.written, q.droppedCount]).toEqual([['b', 'c'], 1]);
  });

  it('drops an event the database refuses on its own merits instead of retrying it forever', () => {
    const store = fakeStore();
    store.fail = new StoreError('internal', '/db', 'bad value');
    const q = createTracerEventQueue(store, () => undefined);
    q.record('odd', {}, 0);
    expect([q.pendingCount, q.droppedCount]).toEqual([0, 1]);
  });
});
