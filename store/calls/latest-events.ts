/**
 * Collapses a run of events to the one per call that decides its stored row.
 * A `call.finished` upsert overwrites everything a `call.started` insert
 * wrote, and a `call.started` never overwrites anything, so for each call
 * the last finished event (or else the first started one) gives the same
 * table as replaying them all. Half the writes when a short call starts and
 * ends within one batch, and bounded memory in the retry queue.
 */

import type { CollectorEvent } from '../../collector/index.js';

/** Of two events of one call, the one that decides its row: the later finished one, else the first. */
export const laterEvent = (kept: CollectorEvent, next: CollectorEvent): CollectorEvent => (next.type === 'call.finished' ? next : kept);

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
