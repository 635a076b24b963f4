/**
 * Collapses a run of events to the one per call that decides its stored row.
 * A `call.finished` (or `call.updated`) upsert overwrites everything a
 * `call.started` insert wrote, and a `call.started` never overwrites
 * anything, so for each call the last ended event (or else the first started
 * one) gives the same table as replaying them all. Half the writes when a short call starts and
 * ends within one batch, and bounded memory in the retry queue.
 */

import type { CollectorEvent } from '../../collector/index.js';

/**
 * Of two events of one call, the one that decides its row: the later ended
 * one (finished or updated), else the first. An update folded into a finish
 * not yet written is that finish, with the newer call: for the store (and the
 * export it queues) the call was never stored finished without it.
 */
export function laterEvent(kept: CollectorEvent, next: CollectorEvent): CollectorEvent {
  if (next.type === 'call.started') return kept;
  if (next.type === 'call.updated' && kept.type !== 'call.updated') return { type: 'call.finished', call: next.call };
  return next;
}

/** Folds `event` into `latest` (keyed by call id), keeping first-seen order. */
export function foldEvent(latest: Map<string, CollectorEvent>, event: CollectorEvent): void {
  const seen = latest.get(event.call.id);
  // Map.set on an existing key keeps its position.
  latest.set(event.call.id, seen === undefined ? event : laterEvent(seen, event));
}

export function latestEventPerCall(events: readonly CollectorEvent[]): CollectorEvent[] {
  if (events.length === 1) return [...events];
  const latest = new Map<string, CollectorEvent>();
  for (const e of events) foldEvent(latest, e);
  return [...latest.values()];
}
