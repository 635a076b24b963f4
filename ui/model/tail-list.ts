/**
 * The live tail's list: messages from the websocket folded, a batch at a time, into rows newest first.
 * A call's `call.finished` replaces its `call.started` row in place, and a later `call.updated` (late
 * output or helpers after the plugin exited) replaces it again; an update of a call not shown (it ended
 * before the page connected, or fell off the list) adds nothing: it is not new. A tracer gap is a row of its own.
 * The list is capped so hundreds of calls a second stay cheap to draw. Pure.
 */

import type { CallSummary, TailGap, TailServerMessage } from '../client/types.js';

export type TailRow = { readonly kind: 'call'; readonly key: string; readonly call: CallSummary } | { readonly kind: 'gap'; readonly key: string; readonly gap: TailGap };

export interface TailList {
  readonly rows: readonly TailRow[];
  /** Calls seen since the page connected (kept rows or not). */
  readonly received: number;
  /** Rows that fell off the end of the capped list. */
  readonly dropped: number;
}

export const EMPTY_TAIL: TailList = { rows: [], received: 0, dropped: 0 };
export const DEFAULT_TAIL_CAP = 500;

export function applyTailMessages(list: TailList, messages: readonly TailServerMessage[], cap = DEFAULT_TAIL_CAP): TailList {
  if (messages.length === 0) return list;
  // Newest first: the batch is reversed onto the front; finished calls update their row where it is.
  const index = new Map<string, number>();
  list.rows.forEach((row, i) => index.set(row.key, i));
  const rows = [...list.rows];
  const fresh: TailRow[] = [];
  const freshIndex = new Map<string, number>();
  let received = list.received;
  for (const message of messages) {
    if (message.type === 'call.started' || message.type === 'call.finished' || message.type === 'call.updated') {
      const row: TailRow = { kind: 'call', key: message.call.id, call: message.call };
      const at = index.get(row.key);
      const atFresh = freshIndex.get(row.key);
      if (at !== undefined) rows[at] = row;
      else if (atFresh !== undefined) fresh[atFresh] = row;
      else if (message.type !== 'call.updated') {
        freshIndex.set(row.key, fresh.length);
        fresh.push(row);
        received++;
      }
    } else if (message.type === 'tracer.gap') {
      const key = `gap:${message.gap.startedAt}`;
      const row: TailRow = { kind: 'gap', key, gap: message.gap };
      const at = index.get(key);
      const atFresh = freshIndex.get(key);
      if (at !== undefined) rows[at] = row;
      else if (atFresh !== undefined) fresh[atFresh] = row;
      else {
        freshIndex.set(key, fresh.length);
        fresh.push(row);
      }
    }
  }
  const all = [...fresh.reverse(), ...rows];
  const kept = all.length > cap ? all.slice(0, cap) : all;
  return { rows: kept, received, dropped: list.dropped + (all.length - kept.length) };
}

/** Calls still running among the rows (their time so far is drawn from startedAt). */
export function runningCount(list: TailList): number {
  let n = 0;
  for (const row of list.rows) if (row.kind === 'call' && row.call.status === 'running') n++;
  return n;
}
