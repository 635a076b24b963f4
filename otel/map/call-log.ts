/**
 * A stored call → one OTLP log record, for people who search logs (Loki,
 * Elasticsearch) rather than traces: a one-line summary, then the payloads
 * per `--otlp-payloads`, as text a line filter finds; the span's attributes
 * to filter on; the span's trace and span ids, so a log view links to the
 * trace.
 */

import { TraceFlags } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { StoredCall } from '../../store/index.js';
import type { PayloadMode } from '../config/otlp-config.js';
import { EVENT_NAMES } from './attribute-names.js';
import { callFacts, type CallFacts } from './call-facts.js';
import type { ExportIdentity } from './identity.js';
import { payloadView, type PayloadView } from './payload.js';
import { hrTimeOfUs } from './time.js';
import type { CallTrace } from './trace-ids.js';

const SEVERITY = {
  ok: { number: SeverityNumber.INFO, text: 'INFO' },
  failed: { number: SeverityNumber.ERROR, text: 'ERROR' },
  incomplete: { number: SeverityNumber.WARN, text: 'WARN' },
} as const;

export function callLogRecord(call: StoredCall, trace: CallTrace, payloads: PayloadMode, identity: ExportIdentity, facts: CallFacts = callFacts(call)): ReadableLogRecord {
  const severity = SEVERITY[facts.outcome.kind];
  const lines = [callSummary(call, facts)];
  for (const [name, stream] of [['stdin', call.stdin], ['stdout', call.stdout], ['stderr', call.stderr]] as const) {
    const view = payloadView(stream, payloads);
    if (view !== null) lines.push(payloadLine(name, view));
  }
  const at = hrTimeOfUs(facts.endUs);
  return {
    hrTime: at,
    // Observed by the tracer as it happened, not when exported.
    hrTimeObserved: at,
    spanContext: { traceId: trace.traceId, spanId: trace.spanId, traceFlags: TraceFlags.SAMPLED },
    severityNumber: severity.number,
    severityText: severity.text,
    body: lines.join('\n'),
    eventName: EVENT_NAMES.call,
    resource: identity.resource,
    instrumentationScope: identity.scope,
    attributes: facts.attributes,
    droppedAttributesCount: 0,
  };
}

/** `CNI ADD bridge default/web-0 eth0 (container 3f2a…): failed after 5012.3 ms: no IP addresses available`. */
export function callSummary(call: StoredCall, facts: CallFacts): string {
  const who = [call.podNamespace && call.podName ? `${call.podNamespace}/${call.podName}` : null, call.ifname].filter(Boolean).join(' ');
  const container = call.containerId ? ` (container ${call.containerId.slice(0, 12)})` : '';
  const took = call.durationUs === null ? '' : ` ${formatMs(call.durationUs / 1000)}`;
  const head = `${facts.spanName}${who ? ` ${who}` : ''}${container}`;
  switch (facts.outcome.kind) {
    case 'ok':
      return `${head}: ok in${took}`;
    case 'failed':
      return `${head}: failed after${took}: ${facts.outcome.message}`;
    case 'incomplete':
      return `${head}: incomplete (${facts.outcome.reason})`;
  }
}

function payloadLine(name: string, view: PayloadView): string {
  const notes = [`${view.totalBytes} bytes`];
  if (view.encoding === 'base64') notes.push('base64');
  if (view.capped) notes.push('cut for export');
  else if (view.truncated) notes.push('cut at capture');
  if (view.redactedPointers.length > 0) notes.push(`redacted: ${view.redactedPointers.join(' ')}`);
  return `${name} (${notes.join(', ')}): ${view.value}`;
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}
