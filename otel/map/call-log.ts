/**
 * A stored call → one OTLP log record, for people who search logs (Loki,
 * Elasticsearch) rather than traces: a one-line summary, then the payloads
 * per `--otlp-payloads`, as text a line filter finds; the span's attributes
 * to filter on; the span's trace and span ids, so a log view links to the
 * trace.
 */

import { TraceFlags, type Attributes } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { isoFromUs } from '../../lib/index.js';
import type { CapturedStream } from '../../collector/index.js';
import type { StoredCall } from '../../store/index.js';
import type { PayloadMode } from '../config/otlp-config.js';
import { CNI, EVENT_NAMES } from './attribute-names.js';
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

/**
 * A call that changed after it was exported (descendants that outlived the
 * plugin wrote to its stdout or stderr, or ended, later). Its span cannot
 * change once sent, so the change is a log record with the span's trace and
 * span ids: what was written after the plugin exited, as stored now (when
 * the span was built after the change it holds these bytes too), and the
 * helpers with how they ended. `atUs`: when the change was stored.
 */
export function callUpdateLogRecord(call: StoredCall, trace: CallTrace, payloads: PayloadMode, identity: ExportIdentity, atUs: number, facts: CallFacts = callFacts(call)): ReadableLogRecord {
  const late = lateOutput(call);
  const wrote = late.map(([name, s]) => `${s.totalBytes} bytes to ${name}`);
  const lines = [`${callHead(call, facts)}: updated after the plugin exited${wrote.length > 0 ? `: its descendants wrote ${wrote.join(' and ')}` : ''}`];
  for (const [name, stream] of late) {
    const view = payloadView(stream, payloads);
    if (view !== null) lines.push(payloadLine(`${name} after exit`, view));
  }
  for (const h of call.helpers) lines.push(`helper ${h.path} (pid ${h.pid}): ${helperEnd(h)}`);
  const attributes: Attributes = { ...facts.attributes, [CNI.helperCount]: call.helpers.length };
  for (const [name, s] of late) attributes[CNI.afterExitBytes(name)] = s.totalBytes;
  const at = hrTimeOfUs(atUs);
  return {
    hrTime: at,
    hrTimeObserved: at,
    spanContext: { traceId: trace.traceId, spanId: trace.spanId, traceFlags: TraceFlags.SAMPLED },
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: lines.join('\n'),
    eventName: EVENT_NAMES.callUpdated,
    resource: identity.resource,
    instrumentationScope: identity.scope,
    attributes,
    droppedAttributesCount: 0,
  };
}

/** The stored part of stdout and stderr from where the plugin's exit left them; streams without such a part are left out. */
export function lateOutput(call: StoredCall): [name: 'stdout' | 'stderr', stream: CapturedStream][] {
  const out: [name: 'stdout' | 'stderr', stream: CapturedStream][] = [];
  for (const [name, stream, offset] of [['stdout', call.stdout, call.stdoutAfterExitOffset], ['stderr', call.stderr, call.stderrAfterExitOffset]] as const) {
    if (offset === null || offset >= stream.bytes.length) continue;
    const bytes = stream.bytes.subarray(offset);
    // Redaction pointers name places in the whole stream's JSON: they say nothing about a slice of it.
    out.push([name, { bytes: Buffer.from(bytes), totalBytes: bytes.length, truncated: stream.truncated }]);
  }
  return out;
}

function helperEnd(h: StoredCall['helpers'][number]): string {
  if (h.endedAtUs === null) return 'its exit was not seen';
  const how = h.signal !== null ? `killed by signal ${h.signal}` : `exit ${h.exitCode ?? '?'}`;
  return `${how} at ${isoFromUs(h.endedAtUs)}`;
}

function callHead(call: StoredCall, facts: CallFacts): string {
  const who = [call.podNamespace && call.podName ? `${call.podNamespace}/${call.podName}` : null, call.ifname].filter(Boolean).join(' ');
  const container = call.containerId ? ` (container ${call.containerId.slice(0, 12)})` : '';
  return `${facts.spanName}${who ? ` ${who}` : ''}${container}`;
}

/** `CNI ADD bridge default/web-0 eth0 (container 3f2a…): failed after 5012.3 ms: no IP addresses available`. */
export function callSummary(call: StoredCall, facts: CallFacts): string {
  const took = call.durationUs === null ? '' : ` ${formatMs(call.durationUs / 1000)}`;
  const head = callHead(call, facts);
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
