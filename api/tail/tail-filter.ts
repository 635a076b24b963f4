/**
 * Which calls a tail client wants to see. Same fields and meaning as the
 * query of /api/v1/calls, so a tail and a list with the same query show the
 * same calls: matched here in JS against live summaries, and handed to the
 * store as a CallFilter for the `?since=` replay.
 */

import type { z } from 'zod';
import type { CallFilter } from '../../store/index.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { tailQuerySchema, type TailFilterFields } from '../schemas/tail.js';
import { parseTimeParam } from '../schemas/time-param.js';

/** Fields shared by the connect query and the `filter` message; every one narrows, absent ones do not filter. */
export type TailFilter = Readonly<TailFilterFields>;

export { tailQuerySchema };

export interface TailQuery {
  readonly filter: TailFilter;
  /** Replay calls started at or after this (µs since the epoch); null: live only. */
  readonly sinceUs: number | null;
}

export function tailQueryFrom(parsed: z.infer<typeof tailQuerySchema>): TailQuery {
  const { since, ...filter } = parsed;
  return { filter: withoutUndefined(filter), sinceUs: since ?? null };
}

/** Removes absent fields, so the filter echoed in hello/filter.updated lists only what narrows. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** `since` parses exactly as on the REST routes (see time-param.ts), so both sides agree. */
export const parseSince = (text: string, nowMs?: number): number | null => parseTimeParam(text, nowMs);

export function matchesFilter(call: CallSummary, f: TailFilter): boolean {
  if (f.namespace !== undefined && call.pod?.namespace !== f.namespace) return false;
  if (f.pod !== undefined && call.pod?.name !== f.pod) return false;
  if (f.command !== undefined && call.command !== f.command) return false;
  if (f.plugin !== undefined && call.plugin !== f.plugin) return false;
  // Like the store's `ok = 0` / `ok = 1`: a running or incomplete call (ok null) matches neither.
  if (f.failed !== undefined && call.ok !== !f.failed) return false;
  if (call.isVersionProbe && f.includeVersion !== true && f.command !== 'VERSION') return false;
  // STATUS heartbeats, as in GET /api/v1/calls: a failing or incomplete one is shown (at its end), the rest only when asked for.
  if (call.command === 'STATUS' && (call.ok === true || call.status === 'running') && f.command !== 'STATUS') return false;
  return true;
}

export function toCallFilter(f: TailFilter, sinceUs: number): CallFilter {
  return { ...f, sinceUs };
}
