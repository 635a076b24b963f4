/**
 * A stored call → its spans: one for the plugin call, with its payloads as
 * events, and one child per helper process. Times are the recorded ones
 * (exec to exit), never the export's. The SDK's OTLP exporters take these
 * ReadableSpans as they take a live tracer's finished spans.
 */

import { createTraceState, SpanKind, SpanStatusCode, TraceFlags, type Attributes, type Link, type SpanContext, type SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';
import type { KernelChange } from '../../collector/index.js';
import type { StoredCall, StoredHelper } from '../../store/index.js';
import type { PayloadMode } from '../config/otlp-config.js';
import { CNI, SEMCONV } from './attribute-names.js';
import { callFacts, helperSpanName, signalName, type CallFacts } from './call-facts.js';
import type { ExportIdentity } from './identity.js';
import { payloadView, type PayloadView } from './payload.js';
import { hrDurationUs, hrTimeOfUs } from './time.js';
import { helperSpanId, type CallTrace } from './trace-ids.js';

export function callSpans(call: StoredCall, trace: CallTrace, payloads: PayloadMode, identity: ExportIdentity, facts: CallFacts = callFacts(call)): ReadableSpan[] {
  const traceState = trace.traceState ? createTraceState(trace.traceState) : undefined;
  const context = (spanId: string): SpanContext => ({ traceId: trace.traceId, spanId, traceFlags: TraceFlags.SAMPLED, ...(traceState ? { traceState } : {}) });
  const callContext = context(trace.spanId);

  const events: TimedEvent[] = [];
  pushPayloadEvent(events, 'cni.stdin', payloadView(call.stdin, payloads), call.startedAtUs);
  pushPayloadEvent(events, 'cni.stdout', payloadView(call.stdout, payloads), facts.endUs);
  pushPayloadEvent(events, 'cni.stderr', payloadView(call.stderr, payloads), facts.endUs);
  for (const c of call.changes ?? []) events.push({ name: 'cni.change', time: hrTimeOfUs(c.atUs), attributes: changeAttributes(c), droppedAttributesCount: 0 });
  for (const m of call.kernelMessages) {
    events.push({ name: 'cni.kernel.message', time: hrTimeOfUs(m.atUs), attributes: { [CNI.kernelMessage]: m.message, [CNI.kernelProcess]: m.process, 'process.pid': m.pid }, droppedAttributesCount: 0 });
  }
  // Span events are kept in time order.
  events.sort((a, b) => a.time[0] - b.time[0] || a.time[1] - b.time[1]);

  const links: Link[] = trace.link ? [{ context: { traceId: trace.link.traceId, spanId: trace.link.spanId, traceFlags: TraceFlags.NONE }, attributes: { [CNI.traceparent]: call.traceParent ?? '' } }] : [];
  const callSpan = span({
    name: facts.spanName,
    context: callContext,
    parent: trace.parentSpanId === null ? undefined : { traceId: trace.traceId, spanId: trace.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: call.parentId === null },
    startUs: call.startedAtUs,
    endUs: facts.endUs,
    status: statusOf(facts),
    attributes: facts.attributes,
    events,
    links,
    identity,
  });

  const spans = [callSpan];
  call.helpers.forEach((h) => spans.push(helperSpan(call, h, context(helperSpanId(call.id, h.seq)), callContext, facts.endUs, payloads, identity)));
  return spans;
}

function helperSpan(call: StoredCall, h: StoredHelper, context: SpanContext, parent: SpanContext, callEndUs: number, payloads: PayloadMode, identity: ExportIdentity): ReadableSpan {
  // A helper whose exit was not seen ended with its call as far as anyone can tell.
  const endUs = h.endedAtUs ?? Math.max(h.startedAtUs, callEndUs);
  const attributes: Attributes = {
    [CNI.callId]: call.id,
    [CNI.helperSeq]: h.seq,
    [SEMCONV.processPid]: h.pid,
    [SEMCONV.processParentPid]: h.ppid,
    [SEMCONV.processExecutablePath]: h.path,
    [SEMCONV.processCommandArgs]: [...h.argv],
    [CNI.streamBytes('stdout')]: h.stdout.totalBytes,
    [CNI.streamBytes('stderr')]: h.stderr.totalBytes,
  };
  if (h.exitCode !== null) attributes[SEMCONV.processExitCode] = h.exitCode;
  if (h.signal !== null) attributes[CNI.signal] = signalName(h.signal);
  if (h.endedAtUs === null) attributes[CNI.endUnknown] = true;
  const events: TimedEvent[] = [];
  pushPayloadEvent(events, 'cni.stdout', payloadView(h.stdout, payloads), endUs);
  pushPayloadEvent(events, 'cni.stderr', payloadView(h.stderr, payloads), endUs);
  let status: SpanStatus = { code: SpanStatusCode.UNSET };
  if (h.signal !== null) status = { code: SpanStatusCode.ERROR, message: `killed by ${signalName(h.signal)}` };
  else if (h.exitCode !== null && h.exitCode !== 0) status = { code: SpanStatusCode.ERROR, message: `exit code ${h.exitCode}` };
  return span({ name: helperSpanName(h), context, parent, startUs: h.startedAtUs, endUs, status, attributes, events, links: [], identity });
}

function statusOf(facts: CallFacts): SpanStatus {
  if (facts.outcome.kind === 'failed') return { code: SpanStatusCode.ERROR, message: facts.outcome.message };
  // Success is UNSET, as the conventions ask of instrumentation; an incomplete call's attributes say why its end is unknown.
  return { code: SpanStatusCode.UNSET };
}

function changeAttributes(c: KernelChange): Attributes {
  const a: Attributes = { [CNI.changeNetns]: c.netns, [CNI.changeObject]: c.object, [CNI.changeAction]: c.action, [CNI.changeSubject]: c.subject, 'process.pid': c.pid };
  if (c.ok !== null) a[CNI.changeOk] = c.ok;
  if (c.error) {
    a[CNI.changeErrno] = c.error.errno;
    if (c.error.message !== null) a[CNI.changeMessage] = c.error.message;
  }
  return a;
}

function pushPayloadEvent(events: TimedEvent[], name: string, view: PayloadView | null, atUs: number): void {
  if (view === null) return;
  events.push({ name, time: hrTimeOfUs(atUs), attributes: payloadAttributes(view), droppedAttributesCount: 0 });
}

export function payloadAttributes(view: PayloadView): Attributes {
  const a: Attributes = {
    [CNI.payload]: view.value,
    [CNI.payloadEncoding]: view.encoding,
    [CNI.payloadBytes]: view.totalBytes,
    [CNI.payloadTruncated]: view.truncated,
  };
  if (view.capped) a[CNI.payloadCapped] = true;
  if (view.redactedPointers.length > 0) a[CNI.payloadRedactedPointers] = [...view.redactedPointers];
  return a;
}

interface SpanParts {
  readonly name: string;
  readonly context: SpanContext;
  readonly parent: SpanContext | undefined;
  readonly startUs: number;
  readonly endUs: number;
  readonly status: SpanStatus;
  readonly attributes: Attributes;
  readonly events: TimedEvent[];
  readonly links: Link[];
  readonly identity: ExportIdentity;
}

function span(p: SpanParts): ReadableSpan {
  const endUs = Math.max(p.startUs, p.endUs);
  return {
    name: p.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => p.context,
    ...(p.parent ? { parentSpanContext: p.parent } : {}),
    startTime: hrTimeOfUs(p.startUs),
    endTime: hrTimeOfUs(endUs),
    duration: hrDurationUs(p.startUs, endUs),
    status: p.status,
    attributes: p.attributes,
    links: p.links,
    events: p.events,
    ended: true,
    resource: p.identity.resource,
    instrumentationScope: p.identity.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
