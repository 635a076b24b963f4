/**
 * The rows an outbox entry points at, read the way the exporter needs them:
 * whole calls (payloads and helpers) through the call reader, and a call's
 * trace key alone (a few columns, no payloads) for walking up to the call
 * that started a delegation chain.
 */

import type { Database } from 'better-sqlite3';
import { createCallReader, type StoredCall } from '../calls/index.js';
import { createFindingsReader, type StoredFinding } from '../findings/index.js';
import type { StoredTracerEvent } from '../tracer-events/index.js';

/** What decides which trace a call's span belongs to. */
export interface CallTraceKey {
  readonly id: string;
  readonly parentId: string | null;
  readonly traceParent: string | null;
  readonly traceState: string | null;
  readonly containerId: string | null;
  readonly ifname: string | null;
}

export interface ExportReads {
  call(id: string): StoredCall | null;
  callTraceKey(id: string): CallTraceKey | null;
  tracerEvent(id: number): StoredTracerEvent | null;
  finding(id: number): StoredFinding | null;
}

interface TraceKeyRow {
  id: string;
  parent_id: string | null;
  trace_parent: string | null;
  trace_state: string | null;
  container_id: string | null;
  ifname: string | null;
}

export function createExportReads(db: Database): ExportReads {
  const calls = createCallReader(db);
  const findings = createFindingsReader(db);
  const traceKey = db.prepare<[string], TraceKeyRow>(
    "SELECT id, parent_id, trace_parent, json_extract(env_json, '$.TRACESTATE') AS trace_state, container_id, ifname FROM calls WHERE id = ?",
  );
  const tracerEvent = db.prepare<[number], { id: number; at_us: number; kind: string; detail_json: string }>(
    'SELECT id, at_us, kind, detail_json FROM tracer_events WHERE id = ?',
  );
  return {
    call: (id) => calls.getCall(id),
    callTraceKey(id) {
      const r = traceKey.get(id);
      if (r === undefined) return null;
      return { id: r.id, parentId: r.parent_id, traceParent: r.trace_parent, traceState: r.trace_state, containerId: r.container_id, ifname: r.ifname };
    },
    tracerEvent(id) {
      const r = tracerEvent.get(id);
      return r === undefined ? null : { id: r.id, atUs: r.at_us, kind: r.kind, detail: JSON.parse(r.detail_json) as unknown };
    },
    finding: (id) => findings.getFinding(id),
  };
}
