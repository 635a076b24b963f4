/**
 * An operator's `full` for one pod or namespace: the payload probes are node-wide (bpftrace cannot
 * attach them per pod), so the bytes of other calls are dropped before anyone sees them, and those
 * calls are published as the light mode's would be.
 */

import type { CapturedStream, CniCall, CollectorEvent } from '../types.js';
import { type CaptureScope, inCaptureScope } from './capture-policy.js';

const NO_BYTES: CapturedStream = { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false };

function withoutPayloads(call: CniCall): CniCall {
  return {
    ...call,
    captureMode: 'light',
    stdin: NO_BYTES,
    stdout: NO_BYTES,
    stderr: NO_BYTES,
    helpers: call.helpers.map((h) => ({ ...h, stdout: NO_BYTES, stderr: NO_BYTES })),
  };
}

/** The events as published under a scope: calls outside it lose their payloads. */
export function scopeEvents(events: readonly CollectorEvent[], scope: CaptureScope | null): readonly CollectorEvent[] {
  if (scope === null) return events;
  return events.map((e) => (e.call.captureMode === 'light' || inCaptureScope(scope, e.call.pod) ? e : { ...e, call: withoutPayloads(e.call) }));
}
