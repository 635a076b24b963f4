// Reading a replay: every page up to the cap, handed back oldest first,
// and capped from the old end.
import { describe, expect, it } from 'vitest';
import { readReplay } from '../../api/tail/tail-replay.js';
import { createCallStore, openDatabase, type CallStore } from '../../store/index.js';
import { finished, makeCall, T0 } from '../integration/tail-harness.js';

function storeWith(n: number): { store: CallStore; ids: string[] } {
  const store = createCallStore(openDatabase(':memory:'));
  const calls = Array.from({ length: n }, (_, i) => makeCall({ at: i * 1000 }));
  store.writeEvents(calls.map(finished));
  return { store, ids: calls.map((c) => c.id) };
}

describe('readReplay', () => {
  it('reads every matching call across store pages, oldest first', async () => {
    const { store, ids } = storeWith(2_500);
    const pages: Array<number> = [];
    const counting: Pick<CallStore, 'listCalls'> = {
      listCalls: (filter, limit, cursor) => {
        pages.push(limit);
        return store.listCalls(filter, limit, cursor);
      },
    };
    const read = await readReplay(counting, { sinceUs: T0 }, 10_000, () => false);
    expect(read.calls.map((c) => c.id)).toEqual(ids);
    expect(read.capped).toBe(false);
    expect(pages).toHaveLength(3);
    store.close();
  });

  it('keeps the newest calls up to the limit and says it was capped', async () => {
    const { store, ids } = storeWith(30);
    const read = await readReplay(store, { sinceUs: T0 }, 12, () => false);
    expect(read.calls.map((c) => c.id)).toEqual(ids.slice(18));
    expect(read.capped).toBe(true);
    store.close();
  });

  it('is not capped when exactly the limit matched', async () => {
    const { store } = storeWith(12);
    expect((await readReplay(store, { sinceUs: T0 }, 12, () => false)).capped).toBe(false);
    store.close();
  });

  it('only counts calls started at or after since', async () => {
    const { store, ids } = storeWith(10);
    const read = await readReplay(store, { sinceUs: T0 + 5_000 }, 100, () => false);
    expect(read.calls.map((c) => c.id)).toEqual(ids.slice(5));
    store.close();
  });

  it('stops reading once the client is gone', async () => {
    const { store } = storeWith(2_500);
    let reads = 0;
    const counting: Pick<CallStore, 'listCalls'> = {
      listCalls: (filter, limit, cursor) => {
        reads++;
        return store.listCalls(filter, limit, cursor);
      },
    };
    await readReplay(counting, { sinceUs: T0 }, 10_000, () => true);
    expect(reads).toBe(1);
    store.close();
  });
});
