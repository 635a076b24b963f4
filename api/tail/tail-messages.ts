/**
 * The tail's wire protocol: JSON text frames, one message each, told apart
 * by `type`. Server messages are encoded once into a Buffer that every
 * matching client's socket writes as is; client messages are parsed and
 * validated here so the session only sees well-formed requests.
 */

import type { RawData } from 'ws';
import type { CollectorEvent } from '../../collector/index.js';
import type { z } from 'zod';
import type { Issue } from '../schemas/error.js';
import { tailClientMessageSchema, type TailConfChange, type TailError, type TailGap, type TailServerMessage } from '../schemas/tail.js';
import { withoutUndefined, type TailFilter } from './tail-filter.js';

export const TAIL_PROTOCOL_VERSION = 1;

/** One offending field: its dotted path ("failed", "since"; "" for the message as a whole) and what is wrong. */
export type TailIssue = Issue;
export type { TailConfChange, TailError, TailGap };

export type CallEventType = CollectorEvent['type'];

/** What the server sends (api/schemas/tail.ts). */
export type ServerMessage = TailServerMessage;

export function encodeMessage(message: ServerMessage): Buffer {
  return Buffer.from(JSON.stringify(message), 'utf8');
}

export type ClientMessage = { readonly type: 'filter'; readonly filter: TailFilter } | { readonly type: 'ping' };

export type ParsedClientMessage = { readonly ok: true; readonly message: ClientMessage } | { readonly ok: false; readonly error: TailError };

/** One issue per offending field, an unknown field named as the REST routes name it. */
export function issuesOf(error: z.ZodError): TailIssue[] {
  return error.issues.flatMap((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => ({ path: path ? `${path}.${k}` : k, message: 'Unknown field' }));
    return [{ path, message: i.message }];
  });
}

/** The issues in one sentence, as the REST routes' messages say them ("Invalid query: since: …"). */
export function describeIssues(what: string, issues: readonly TailIssue[]): string {
  return `${what}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`;
}

export function parseClientMessage(data: RawData, isBinary: boolean): ParsedClientMessage {
  if (isBinary) return bad('Binary frames are not supported: send JSON text frames');
  let json: unknown;
  try {
    json = JSON.parse(textOf(data));
  } catch {
    return bad('The message is not valid JSON');
  }
  const parsed = tailClientMessageSchema.safeParse(json);
  if (!parsed.success) {
    const issues = issuesOf(parsed.error);
    return bad(describeIssues('Invalid message (known types: "filter", "ping")', issues), issues);
  }
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
