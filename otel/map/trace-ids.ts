/**
 * Which trace a call's span belongs to, and the ids of its spans. Pure and
 * deterministic: the same call gets the same ids on every export and after
 * any restart, so nothing about ids needs storing.
 *
 * - A call whose TRACEPARENT is a valid, sampled W3C trace context is a
 *   child of that span (the runtime's `cni.Setup` or similar), TRACESTATE kept.
 * - Otherwise every call of one sandbox attachment (container id + ifname:
 *   its VERSION, ADD, CHECK and DEL, days apart or across restarts) lands in
 *   one trace whose id is derived from the attachment. An unsampled
 *   TRACEPARENT (the runtime recorded nothing) becomes a span link instead.
 * - A delegated call (host-local under bridge) is a child of its delegating
 *   call's span, in the trace of the call at the top of the chain.
 * - Helper processes are children of their call's span.
 */

import { createHash } from 'node:crypto';

export interface Traceparent {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
}

/** The columns of a call that decide its trace (a store CallTraceKey). */
export interface TraceKey {
  readonly id: string;
  readonly parentId: string | null;
  readonly traceParent: string | null;
  readonly traceState: string | null;
  readonly containerId: string | null;
  readonly ifname: string | null;
}

export interface CallTrace {
  readonly traceId: string;
  readonly spanId: string;
  /** The span this call's span is a child of; null for a root span. */
  readonly parentSpanId: string | null;
  /** W3C tracestate to carry, from the TRACEPARENT the trace came from. */
  readonly traceState: string | null;
  /** A runtime span this call was made under but that was not sampled: linked, not parented. */
  readonly link: { readonly traceId: string; readonly spanId: string } | null;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ZERO32 = '0'.repeat(32);
const ZERO16 = '0'.repeat(16);

/** W3C Trace Context level 1: `00-<trace-id>-<parent-id>-<flags>`; null when invalid. */
export function parseTraceparent(text: string | null): Traceparent | null {
  if (text === null) return null;
  const parts = text.trim().split('-');
  if (parts.length < 4) return null;
  const [version, traceId, spanId, flags] = parts as [string, string, string, string];
  if (!/^[0-9a-f]{2}$/.test(version) || version === 'ff') return null;
  // Version 00 has exactly four fields; later versions may append more (the spec says to read the first four).
  if (version === '00' && parts.length !== 4) return null;
  if (!HEX32.test(traceId) || traceId === ZERO32 || !HEX16.test(spanId) || spanId === ZERO16 || !/^[0-9a-f]{2}$/.test(flags)) return null;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

function digestHex(label: string, ...parts: readonly string[]): string {
  const h = createHash('sha256');
  h.update(label);
  for (const p of parts) h.update(`\0${p}`);
  return h.digest('hex');
}

/** Ids of all zeros are invalid in OTLP; a digest that starts so is astronomically rare, but stays valid. */
const nonZero = (hex: string, zero: string): string => (hex === zero ? `${hex.slice(0, -1)}1` : hex);

export const callSpanId = (callId: string): string => nonZero(digestHex('cnirec/span', callId).slice(0, 16), ZERO16);
export const helperSpanId = (callId: string, seq: number): string => nonZero(digestHex('cnirec/helper', callId, String(seq)).slice(0, 16), ZERO16);

/** The trace of a sandbox attachment without a trace context of its own; a call without a container id gets one of its own. */
export function attachmentTraceId(key: Pick<TraceKey, 'id' | 'containerId' | 'ifname'>): string {
  const hex = key.containerId ? digestHex('cnirec/attachment', key.containerId, key.ifname ?? '') : digestHex('cnirec/call', key.id);
  return nonZero(hex.slice(0, 32), ZERO32);
}

/**
 * `chain`: the call first, then its delegating call, and so on up to the
 * top-level call (or as far as the store still has them).
 */
export function callTrace(chain: readonly TraceKey[]): CallTrace {
  const self = chain[0];
  if (self === undefined) throw new Error('callTrace needs at least the call itself');
  const root = chain[chain.length - 1]!;
  const parent = parseTraceparent(root.traceParent);
  const joined = parent !== null && parent.sampled;
  const traceId = joined ? parent.traceId : attachmentTraceId(root);
  const traceState = joined ? root.traceState : null;
  const spanId = callSpanId(self.id);
  if (self.parentId !== null) {
    // Delegated: under the delegating call's span, even when that row is gone (its span was sent before).
    return { traceId, spanId, parentSpanId: callSpanId(self.parentId), traceState, link: null };
  }
  return {
    traceId,
    spanId,
    parentSpanId: joined ? parent.spanId : null,
    traceState,
    link: parent !== null && !parent.sampled ? { traceId: parent.traceId, spanId: parent.spanId } : null,
  };
}
