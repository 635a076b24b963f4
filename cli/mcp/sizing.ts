/**
 * Sizing the record for a model's context: lists as brief calls (the fields that answer "what failed,
 * where, when, how"), captured streams cut to a cap with a flag saying so, and any other field too large
 * dropped or shortened and named in a `cut` list. Pure. The shapes are the API's own (picked, never
 * redeclared), and fields the record gains later pass through untouched unless they are too large.
 */

import type { CallSummary, CallTree, HelperSummary, Payload } from '../api-client.js';

/** A call in a list: enough to pick the one to open with get_call. */
const BRIEF_CALL_FIELDS = [
  'id',
  'command',
  'plugin',
  'pod',
  'containerId',
  'ifname',
  'parentId',
  'startedAt',
  'durationMs',
  'status',
  'ok',
  'exitCode',
  'signal',
  'error',
  'incompleteReason',
  'captureMode',
  'lostRecords',
] as const satisfies readonly (keyof CallSummary)[];

export type BriefCall = Pick<CallSummary, (typeof BRIEF_CALL_FIELDS)[number]>;

export function briefCall(call: CallSummary): BriefCall {
  return Object.fromEntries(BRIEF_CALL_FIELDS.map((k) => [k, call[k]])) as BriefCall;
}

type BriefHelper = Pick<HelperSummary, 'seq' | 'argv' | 'durationMs' | 'exitCode' | 'signal'>;
export interface BriefTree extends BriefCall {
  children: BriefTree[];
  helpers: BriefHelper[];
}

export function briefTree(tree: CallTree): BriefTree {
  return {
    ...briefCall(tree),
    children: tree.children.map(briefTree),
    helpers: tree.helpers.map((h) => ({ seq: h.seq, argv: h.argv, durationMs: h.durationMs, exitCode: h.exitCode, signal: h.signal })),
  };
}

/** A captured stream as get_call gives it: the text cut to the cap; base64 only when the bytes are not text. */
export interface SizedPayload extends Omit<Payload, 'text' | 'base64'> {
  text: string | null;
  base64: string | null;
  /** Bytes of the capture given here (of text, or of base64 decoded). */
  shownBytes: number;
  /** Cut here, to fit the cap: `bytes - shownBytes` more are stored (the API's /api/v1/calls/:id has them). */
  cut: boolean;
}

function isPayload(v: unknown): v is Payload {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const p = v as Record<string, unknown>;
  return typeof p.base64 === 'string' && 'text' in p && typeof p.bytes === 'number' && typeof p.truncated === 'boolean';
}

export function sizePayload(p: Payload, maxBytes: number): SizedPayload {
  const { text, base64, ...rest } = p;
  if (text !== null) {
    const whole = Buffer.from(text, 'utf8');
    if (whole.length <= maxBytes) return { ...rest, text, base64: null, shownBytes: whole.length, cut: false };
    // Cut on a character boundary: a partial UTF-8 sequence at the end decodes to U+FFFD, dropped.
    const shown = whole.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/, '');
    return { ...rest, text: shown, base64: null, shownBytes: Buffer.byteLength(shown, 'utf8'), cut: true };
  }
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length <= maxBytes) return { ...rest, text: null, base64, shownBytes: bytes.length, cut: false };
  return { ...rest, text: null, base64: bytes.subarray(0, maxBytes).toString('base64'), shownBytes: maxBytes, cut: true };
}

export interface Sized<T> {
  readonly value: T;
  /** JSON paths of what was cut or dropped, with how. */
  readonly cut: string[];
}

/**
 * `value` with every captured stream in it (the call's, its helpers', any a later field holds) cut to
 * `payloadBytes`, and then every other field whose JSON is larger than `fieldBytes` shortened: an array
 * keeps its first items that fit, anything else becomes null. Each cut is named in `cut`.
 */
export function sizeRecord(value: Record<string, unknown>, { payloadBytes, fieldBytes }: { payloadBytes: number; fieldBytes: number }): Sized<Record<string, unknown>> {
  const cut: string[] = [];
  const walk = (v: unknown, path: string): unknown => {
    if (isPayload(v)) {
      const sized = sizePayload(v, payloadBytes);
      if (sized.cut) cut.push(`${path} (${sized.shownBytes} of ${sized.bytes} bytes shown)`);
      return sized;
    }
    if (Array.isArray(v)) return v.map((item, i) => walk(item, `${path}[${i}]`));
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, path ? `${path}.${k}` : k)]));
    return v;
  };
  const walked = walk(value, '') as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(walked)) {
    const size = jsonBytes(v);
    if (size <= fieldBytes) out[k] = v;
    else if (Array.isArray(v)) {
      const kept = leadingThatFit(v, fieldBytes);
      out[k] = kept;
      cut.push(`${k} (${kept.length} of ${v.length} items kept)`);
    } else {
      out[k] = null;
      cut.push(`${k} (${size} bytes of JSON left out)`);
    }
  }
  return { value: out, cut };
}

export function jsonBytes(v: unknown): number {
  return v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v), 'utf8');
}

function leadingThatFit<T>(items: readonly T[], maxBytes: number): T[] {
  const kept: T[] = [];
  let used = 2;
  for (const item of items) {
    used += jsonBytes(item) + 1;
    if (used > maxBytes) break;
    kept.push(item);
  }
  return kept;
}
