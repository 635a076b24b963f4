/**
 * The tail's wire protocol: JSON text frames, one message each, told apart
 * by `type`. Server messages are encoded once into a Buffer that every
 * matching client's socket writes as is; client messages are parsed and
 * validated here so the session only sees well-formed requests.
 */

import type { RawData } from 'ws';
import { z } from 'zod';
import type { CallSummary } from '../schemas/call-summary.js';
import type { CacheEventType, TailCacheEntry } from './tail-cache.js';
import { filterMessageFieldsSchema, withoutUndefined, type TailFilter } from './tail-filter.js';

export const TAIL_PROTOCOL_VERSION = 1;

export interface TailIssue {
  /** Dotted path of the offending field ("failed", "since"); "" for the message as a whole. */
  readonly path: string;
  readonly message: string;
}

export interface TailError {
  readonly code: 'bad_request' | 'replay_failed';
  readonly message: string;
  readonly issues?: readonly TailIssue[];
}

export type CallEventType = 'call.started' | 'call.finished';

/**
 * A stretch with no recording tracer: sent when bpftrace goes away
 * (`endedAt` null) and again when a new one records. Every client gets it,
 * whatever its filter: calls it would have wanted may be missing.
 */
export interface TailGap {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly durationMs: number | null;
  readonly reason: string;
  /** Calls in flight when the tracer went away; each also comes as a `call.finished` with status incomplete. */
  readonly incompleteCalls: number;
}

/**
 * A file of a CNI conf dir was added, rewritten or removed. Every client
 * gets it, whatever its filter (a conf change concerns every pod); the
 * versions are at GET /api/v1/node/cni/conf-versions?path=….
 */
export interface TailConfChange {
  readonly path: string;
  readonly dir: string;
  readonly change: 'added' | 'changed' | 'removed';
  /** The network it defines now (null when removed or unparsable). */
  readonly network: string | null;
  readonly sha256: string | null;
  /** Why runtimes would refuse the new version; null when it loads (or was removed). */
  readonly parseError: string | null;
  readonly at: string;
}

export type ServerMessage =
  | {
      readonly type: 'hello';
      readonly protocol: number;
      readonly filter: TailFilter;
      readonly replay: { readonly since: string; readonly limit: number } | null;
    }
  | { readonly type: CallEventType; readonly call: CallSummary }
  | { readonly type: CacheEventType; readonly entry: TailCacheEntry }
  | { readonly type: 'tracer.gap'; readonly gap: TailGap }
  | { readonly type: 'config.changed'; readonly change: TailConfChange }
  | { readonly type: 'replay.done'; readonly calls: number; readonly capped: boolean; readonly message?: string }
  | { readonly type: 'filter.updated'; readonly filter: TailFilter }
  | { readonly type: 'pong' }
  | { readonly type: 'error'; readonly error: TailError };

export function encodeMessage(message: ServerMessage): Buffer {
  return Buffer.from(JSON.stringify(message), 'utf8');
}

const clientMessageSchema = z.discriminatedUnion('type', [
  filterMessageFieldsSchema.extend({ type: z.literal('filter') }),
  z.strictObject({ type: z.literal('ping') }),
]);

export type ClientMessage = { readonly type: 'filter'; readonly filter: TailFilter } | { readonly type: 'ping' };

export type ParsedClientMessage = { readonly ok: true; readonly message: ClientMessage } | { readonly ok: false; readonly error: TailError };

export function issuesOf(error: z.ZodError): TailIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

export function parseClientMessage(data: RawData, isBinary: boolean): ParsedClientMessage {
  if (isBinary) return bad('Binary frames are not supported: send JSON text frames');
  let json: unknown;
  try {
    json = JSON.parse(textOf(data));
  } catch {
    return bad('The message is not valid JSON');
  }
  const parsed = clientMessageSchema.safeParse(json);
  if (!parsed.success) return bad('Invalid message (known types: "filter", "ping"); see issues', issuesOf(parsed.error));
  if (parsed.data.type === 'ping') return { ok: true, message: { type: 'ping' } };
  const { type: _type, ...filter } = parsed.data;
  return { ok: true, message: { type: 'filter', filter: withoutUndefined(filter) } };
}

function bad(message: string, issues?: TailIssue[]): ParsedClientMessage {
  return { ok: false, error: { code: 'bad_request', message, ...(issues ? { issues } : {}) } };
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
