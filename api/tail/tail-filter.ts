/**
 * Which calls a tail client wants to see. Same fields and meaning as the
 * query of /api/v1/calls, so a tail and a list with the same query show the
 * same calls: matched here in JS against live summaries, and handed to the
 * store as a CallFilter for the `?since=` replay.
 */

import { z } from 'zod';
import type { CallFilter } from '../../store/index.js';
import type { CallSummary } from '../schemas/call-summary.js';
import { parseTimeParam } from '../schemas/time-param.js';

/** Kubernetes names and plugin binaries stay well below this; it only stops abuse. */
const MAX_NAME_LENGTH = 253;

const name = z.string().min(1).max(MAX_NAME_LENGTH);
const command = z.string().min(1).max(32);

/** Fields shared by the connect query and the `filter` message; every one narrows, absent ones do not filter. */
export interface TailFilter {
  readonly namespace?: string;
  readonly pod?: string;
  readonly command?: string;
  readonly plugin?: string;
  /** true: calls that ended badly; false: calls that succeeded. Either way only ended calls match. */
  readonly failed?: boolean;
  /** VERSION probes are hidden unless true (or `command` is VERSION), as in the REST lists. */
  readonly includeVersion?: boolean;
}

/**
 * The filter in a client's `filter` message: JSON booleans, and strict, so a
 * typo in a field name is reported instead of silently widening the tail.
 */
export const filterMessageFieldsSchema = z.strictObject({
  namespace: name.optional(),
  pod: name.optional(),
  command: command.optional(),
  plugin: name.optional(),
  failed: z.boolean().optional(),
  includeVersion: z.boolean().optional(),
});

/**
 * The connect query. Not strict: other layers (auth, proxies) may put their
 * own parameters on the URL. A repeated parameter arrives as an array and is
 * refused by the string schemas, naming the field.
 */
export const tailQuerySchema = z.object({
  namespace: name.optional(),
  pod: name.optional(),
  command: command.optional(),
  plugin: name.optional(),
  failed: z.stringbool().optional(),
  includeVersion: z.stringbool().optional(),
  since: z
    .string()
    .transform((text, ctx) => {
      const us = parseSince(text);
      if (us === null) {
        ctx.issues.push({ code: 'custom', input: text, message: 'Expected an ISO 8601 date-time or epoch milliseconds' });
        return z.NEVER;
      }
      return us;
    })
    .optional(),
});

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

/** `since` parses exactly as on the REST routes (epoch ms or ISO 8601), so both sides agree. */
export const parseSince = parseTimeParam;

export function matchesFilter(call: CallSummary, f: TailFilter): boolean {
  if (f.namespace !== undefined && call.pod?.namespace !== f.namespace) return false;
  if (f.pod !== undefined && call.pod?.name !== f.pod) return false;
  if (f.command !== undefined && call.command !== f.command) return false;
  if (f.plugin !== undefined && call.plugin !== f.plugin) return false;
  // Like the store's `ok = 0` / `ok = 1`: a running or incomplete call (ok null) matches neither.
  if (f.failed !== undefined && call.ok !== !f.failed) return false;
  if (call.isVersionProbe && f.includeVersion !== true && f.command !== 'VERSION') return false;
  return true;
}

export function toCallFilter(f: TailFilter, sinceUs: number): CallFilter {
  return { ...f, sinceUs };
}
