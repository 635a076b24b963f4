/**
 * The daemon's own news as log records: the tracer's history (a gap while
 * bpftrace was down, its restart, retention deleting early…) and findings
 * opening or resolving (a DEL loop, a leaked IP). A finding about a call
 * carries that call's trace and span ids, so the log links to its trace.
 */

import { TraceFlags, type AttributeValue, type Attributes } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { StoredFinding, StoredTracerEvent } from '../../store/index.js';
import { CNI, CNIREC, EVENT_NAMES, SEMCONV } from './attribute-names.js';
import type { ExportIdentity } from './identity.js';
import { hrTimeOfUs } from './time.js';

/** Kinds that mean calls went unrecorded or data went early: a warning. */
const WARNING_KINDS = new Set(['gap-started', 'restarted', 'lost-events', 'retention-size']);

const TRACER_SENTENCES: Readonly<Record<string, (d: Record<string, unknown>) => string>> = {
  started: (d) => `cnirec's tracer started recording${d.mode ? ` (capture ${String(d.mode)})` : ''}`,
  stopped: () => "cnirec's tracer stopped (the daemon is shutting down)",
  'gap-started': (d) => `The tracer stopped recording (${String(d.reason ?? 'unknown reason')}); calls made until it restarts are not recorded`,
  restarted: (d) => `The tracer records again after a gap of ${String(d.gapSeconds ?? '?')} s (${String(d.reason ?? 'unknown reason')})`,
  'retention-size': () => 'Retention deleted calls before their maximum age to keep the database under its size limit',
};

export function tracerEventLogRecord(event: StoredTracerEvent, identity: ExportIdentity): ReadableLogRecord {
  const detail = isRecord(event.detail) ? event.detail : {};
  const attributes: Attributes = { [CNIREC.tracerEventKind]: event.kind };
  for (const [key, value] of Object.entries(detail)) {
    const v = attributeValue(value);
    if (v !== null) attributes[CNIREC.tracerDetail(snake(key))] = v;
  }
  const sentence = TRACER_SENTENCES[event.kind]?.(detail) ?? `Tracer event ${event.kind}`;
  const at = hrTimeOfUs(event.atUs);
  const warning = WARNING_KINDS.has(event.kind);
  return {
    hrTime: at,
    hrTimeObserved: at,
    severityNumber: warning ? SeverityNumber.WARN : SeverityNumber.INFO,
    severityText: warning ? 'WARN' : 'INFO',
    body: sentence,
    eventName: EVENT_NAMES.tracer(event.kind),
    resource: identity.resource,
    instrumentationScope: identity.scope,
    attributes,
    droppedAttributesCount: 0,
  };
}

/** `callSpan`: the trace and span ids of the finding's call, when it names one that is still stored. */
export function findingLogRecord(
  finding: StoredFinding,
  state: 'opened' | 'resolved',
  callSpan: { readonly traceId: string; readonly spanId: string } | null,
  identity: ExportIdentity,
): ReadableLogRecord {
  const attributes: Attributes = { [CNIREC.findingId]: finding.id, [CNIREC.findingKind]: finding.kind, [CNIREC.findingState]: state };
  if (finding.path) attributes[CNIREC.findingPath] = finding.path;
  if (finding.containerId) attributes[SEMCONV.containerId] = finding.containerId;
  if (finding.network) attributes[CNI.networkName] = finding.network;
  if (finding.ip) attributes[CNIREC.findingIp] = finding.ip;
  if (finding.callId) attributes[CNIREC.findingCallId] = finding.callId;
  const at = hrTimeOfUs((state === 'resolved' ? (finding.resolvedAtMs ?? finding.lastSeenMs) : finding.firstSeenMs) * 1000);
  return {
    hrTime: at,
    hrTimeObserved: at,
    ...(callSpan ? { spanContext: { traceId: callSpan.traceId, spanId: callSpan.spanId, traceFlags: TraceFlags.SAMPLED } } : {}),
    severityNumber: state === 'opened' ? SeverityNumber.WARN : SeverityNumber.INFO,
    severityText: state === 'opened' ? 'WARN' : 'INFO',
    body: state === 'opened' ? `Finding ${finding.kind}: ${finding.message}` : `Resolved: finding ${finding.kind}: ${finding.message}`,
    eventName: EVENT_NAMES.finding(state),
    resource: identity.resource,
    instrumentationScope: identity.scope,
    attributes,
    droppedAttributesCount: 0,
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function attributeValue(v: unknown): AttributeValue | null {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return null;
}
