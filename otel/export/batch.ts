/**
 * Outbox entries → one batch of spans and log records. Pure apart from the
 * reads it is handed: what is exported for an entry depends only on the
 * stored rows, so a batch rebuilt after a failed export is the same batch.
 *
 * A signal's items are built only for entries above that signal's
 * watermark: after traces went through and logs failed, the retry sends
 * the logs alone, and no span twice.
 */

import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { ExportReads, OutboxEntry, StoredCall, Watermarks } from '../../store/index.js';
import type { PayloadMode } from '../config/otlp-config.js';
import { callFacts } from '../map/call-facts.js';
import { callLogRecord, callUpdateLogRecord, lateOutput } from '../map/call-log.js';
import { callSpans } from '../map/call-spans.js';
import { findingLogRecord, tracerEventLogRecord } from '../map/event-logs.js';
import type { ExportIdentity } from '../map/identity.js';
import { CAPPED_PAYLOAD_BYTES } from '../map/payload.js';
import { callTrace, type CallTrace, type TraceKey } from '../map/trace-ids.js';

/** How far up a delegation chain to look for the call that carries the trace (multus → bridge → host-local is 3). */
const MAX_CHAIN = 8;

export interface BatchOptions {
  readonly payloads: PayloadMode;
  readonly identity: ExportIdentity;
  /** Which signals are sent at all; a signal that is off is not built. */
  readonly signals: { readonly traces: boolean; readonly logs: boolean };
  /** Payload bytes a batch may carry before it is cut (the last entry may go over). */
  readonly maxPayloadBytes: number;
}

export interface Batch {
  readonly spans: ReadableSpan[];
  readonly logs: ReadableLogRecord[];
  /** The last entry this batch covers: each signal's watermark moves here once it is sent. */
  readonly lastSeq: number;
  /** Entries whose row is gone (retention pruned it before it was sent). */
  readonly missing: number;
  /** The recorded end of each call in the batch (µs), for the export lag. */
  readonly callEndsUs: number[];
}

export function buildBatch(entries: readonly OutboxEntry[], marks: Watermarks, reads: ExportReads, opts: BatchOptions): Batch {
  const spans: ReadableSpan[] = [];
  const logs: ReadableLogRecord[] = [];
  const callEndsUs: number[] = [];
  const keys = new Map<string, TraceKey | null>();
  let missing = 0;
  let lastSeq = marks.traces < marks.logs ? marks.traces : marks.logs;
  let bytes = 0;

  const traceOf = (first: TraceKey): CallTrace => {
    const chain = [first];
    for (let key = first; key.parentId !== null && chain.length < MAX_CHAIN; ) {
      let parent = keys.get(key.parentId);
      if (parent === undefined) {
        parent = reads.callTraceKey(key.parentId);
        keys.set(key.parentId, parent);
      }
      if (parent === null) break;
      chain.push(parent);
      key = parent;
    }
    return callTrace(chain);
  };

  for (const entry of entries) {
    if (bytes >= opts.maxPayloadBytes) break;
    lastSeq = entry.seq;
    const wantSpans = opts.signals.traces && entry.seq > marks.traces;
    const wantLogs = opts.signals.logs && entry.seq > marks.logs;
    if (!wantSpans && !wantLogs) continue;

    if (entry.kind === 'call') {
      const call = reads.call(entry.ref);
      if (call === null) {
        missing++;
        continue;
      }
      const trace = traceOf(traceKeyOf(call));
      const facts = callFacts(call);
      if (wantSpans) spans.push(...callSpans(call, trace, opts.payloads, opts.identity, facts));
      if (wantLogs) logs.push(callLogRecord(call, trace, opts.payloads, opts.identity, facts));
      callEndsUs.push(facts.endUs);
      bytes += payloadBytes(call, opts.payloads) * (wantSpans && wantLogs ? 2 : 1);
    } else if (!wantLogs) {
      continue;
    } else if (entry.kind === 'call-updated') {
      // Its span went out with the first entry and cannot change: the change is a log record linked to it.
      const call = reads.call(entry.ref);
      if (call === null) {
        missing++;
        continue;
      }
      logs.push(callUpdateLogRecord(call, traceOf(traceKeyOf(call)), opts.payloads, opts.identity, entry.queuedUs));
      bytes += lateOutput(call).reduce((n, [, s]) => n + Math.min(s.bytes.length, opts.payloads === 'none' ? 0 : opts.payloads === 'capped' ? CAPPED_PAYLOAD_BYTES : Infinity), 0);
    } else if (entry.kind === 'tracer-event') {
      const event = reads.tracerEvent(Number(entry.ref));
      if (event === null) missing++;
      else logs.push(tracerEventLogRecord(event, opts.identity));
    } else {
      const finding = reads.finding(Number(entry.ref));
      if (finding === null) {
        missing++;
        continue;
      }
      const key = finding.callId === null ? null : reads.callTraceKey(finding.callId);
      const trace = key === null ? null : traceOf(key);
      logs.push(findingLogRecord(finding, entry.kind === 'finding-opened' ? 'opened' : 'resolved', trace, opts.identity));
    }
  }
  return { spans, logs, lastSeq, missing, callEndsUs };
}

function traceKeyOf(call: StoredCall): TraceKey {
  return { id: call.id, parentId: call.parentId, traceParent: call.traceParent, traceState: call.env.TRACESTATE ?? null, containerId: call.containerId, ifname: call.ifname };
}

/** What a call's payloads add to a request, as sent (helpers' output included). */
function payloadBytes(call: NonNullable<ReturnType<ExportReads['call']>>, mode: PayloadMode): number {
  if (mode === 'none') return 0;
  const cap = mode === 'capped' ? CAPPED_PAYLOAD_BYTES : Infinity;
  let n = Math.min(call.stdin.bytes.length, cap) + Math.min(call.stdout.bytes.length, cap) + Math.min(call.stderr.bytes.length, cap);
  for (const h of call.helpers) n += Math.min(h.stdout.bytes.length, cap) + Math.min(h.stderr.bytes.length, cap);
  return n;
}
