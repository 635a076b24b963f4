/**
 * Reads the calls a `?since=` client asked to catch up on. The store lists
 * newest first, so pages are read back in time up to the cap and then
 * reversed: the client gets them oldest first, and a capped replay loses its
 * oldest calls rather than leaving a hole just before the live stream.
 * Yields to the event loop between pages so a long replay does not stall
 * the collector or the other clients.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { MAX_PAGE_SIZE, type CallFilter, type CallStore, type StoredCallSummary } from '../../store/index.js';

export interface ReplayRead {
  /** Oldest first. */
  readonly calls: StoredCallSummary[];
  /** More calls matched than `limit`: the oldest of them were left out. */
  readonly capped: boolean;
}

export async function readReplay(
  store: Pick<CallStore, 'listCalls'>,
  filter: CallFilter,
  limit: number,
  cancelled: () => boolean,
): Promise<ReplayRead> {
  const newestFirst: StoredCallSummary[] = [];
  let cursor: string | null = null;
  let capped = false;
  while (newestFirst.length < limit) {
    const page = store.listCalls(filter, Math.min(MAX_PAGE_SIZE, limit - newestFirst.length), cursor);
    newestFirst.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) break;
    if (newestFirst.length >= limit) {
      capped = true;
      break;
    }
    await nextTurn();
    if (cancelled()) break;
  }
  return { calls: newestFirst.reverse(), capped };
}
