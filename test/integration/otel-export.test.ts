// The OpenTelemetry export against a real SQLite file and a real OTLP/HTTP receiver that decodes
// with the official .proto definitions: calls queued in the transaction that finishes them, sent
// exactly once across receiver outages, refusals and exporter restarts, within the backlog bounds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { createOtelExport, resolveOtlpConfig, type ExporterTuning, type OtelExporter } from '../../otel/index.js';
import { callSpanId } from '../../otel/map/trace-ids.js';
import BetterSqlite3 from 'better-sqlite3';
import { createCallStore, createExportOutbox, openDatabase, type CallStore, type Database } from '../../store/index.js';
import { MIGRATIONS, migrate } from '../../store/db/migrations.js';
import { createFindingsLog } from '../../store/findings/cache-findings.js';
import { createRuntimeTracker } from '../../store/runtime/index.js';
import { leakTimingFor } from '../../collector/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../bench/lib/otlp-receiver.js';
import { syntheticCall, syntheticTree } from '../support/synthetic-calls.js';

const FAST: Partial<ExporterTuning> = { coalesceMs: 5, minPassIntervalMs: 10, pollMs: 50, backoffInitialMs: 50, backoffMaxMs: 200, stopWaitMs: 3000 };

interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  obj: object;
}

let dir: string;
let dbFile: string;
let db: Database;
let store: CallStore;
let receiver: OtlpReceiver;
const exporters: OtelExporter[] = [];
let logLines: LogLine[];
let t = 1_763_750_000_000_000;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-otel-'));
  dbFile = path.join(dir, 'cnirec.db');
  db = openDatabase(dbFile);
  store = createCallStore(db);
  receiver = await startOtlpReceiver();
  logLines = [];
});

afterEach(async () => {
  for (const e of exporters.splice(0)) await e.stop();
  await receiver.close();
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function exporter(env: Record<string, string> = {}, tuning: Partial<ExporterTuning> = {}, onDb: Database = db): OtelExporter {
  const config = resolveOtlpConfig({ endpoint: receiver.url, payloads: 'capped' }, { OTEL_EXPORTER_OTLP_TIMEOUT: '500', ...env })!;
  const log = (level: LogLine['level']) => (obj: object, msg: string) => logLines.push({ level, msg, obj });
  const e = createOtelExport({ db: onDb, config, version: '0.0.0-test', hostName: 'test-host', log: { info: log('info'), warn: log('warn'), error: log('error') }, tuning: { ...FAST, ...tuning } });
  exporters.push(e);
  return e;
}

const finished = (call: CniCall): CollectorEvent => ({ type: 'call.finished', call });
const updated = (call: CniCall): CollectorEvent => ({ type: 'call.updated', call });
/** The call as the collector republishes it once a descendant that outlived the plugin wrote to its stderr. */
const withLateStderr = (call: CniCall, text: string): CniCall => ({ ...call, stderr: { bytes: Buffer.from(text), totalBytes: text.length, truncated: false }, stderrAfterExitOffset: 0 });
const nextCall = (over: Partial<CniCall> = {}) => ({ ...syntheticCall({ startedAtUs: (t += 10_000) }), ...over });

async function until<T>(what: string, probe: () => T | null | false | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const spanNames = () => receiver.spans.map((s) => s.name);
const callSpans = () => receiver.spans.filter((s) => s.name.startsWith('CNI '));
const callIdsOf = <T extends { attributes: Readonly<Record<string, unknown>> }>(items: readonly T[]) => items.map((i) => i.attributes['cni.call.id']).filter(Boolean);
const sortedIds = (ids: readonly unknown[]) => [...ids].map(String).sort();

describe('the export outbox', () => {
  it('queues a call once, when it leaves running, and nothing while export is off', () => {
    const outbox = createExportOutbox(db);
    const before = nextCall();
    store.writeEvents([finished(before)]);
    outbox.startQueueing();
    const running = nextCall({ status: 'running', outcome: null, endedAtUs: null, durationUs: null });
    store.writeEvents([{ type: 'call.started', call: running }]);
    expect(outbox.entriesAfter(0, 100)).toEqual([]);
    store.writeEvents([finished({ ...running, status: 'finished', outcome: { exitCode: 0, signal: null, coreDumped: false }, endedAtUs: running.startedAtUs + 5 })]);
    // A retried batch rewrites the finished row: not queued again.
    store.writeEvents([finished({ ...running, status: 'finished', outcome: { exitCode: 0, signal: null, coreDumped: false }, endedAtUs: running.startedAtUs + 5 })]);
    const straight = nextCall();
    store.writeEvents([finished(straight)]);
    const stale = nextCall({ status: 'running', outcome: null, endedAtUs: null, durationUs: null });
    store.writeEvents([{ type: 'call.started', call: stale }]);
    expect(store.markRunningAsIncomplete('cnirec stopped while the call ran')).toBe(1);
    expect(outbox.entriesAfter(0, 100).map((e) => [e.kind, e.ref])).toEqual([
      ['call', running.id],
      ['call', straight.id],
      ['call', stale.id],
    ]);
    outbox.stopQueueing();
    store.writeEvents([finished(nextCall())]);
    expect(outbox.entriesAfter(0, 100)).toHaveLength(3);
  });

  it('queues a call changed after it was stored finished as call-updated, and an update folded into its finish as the finish', () => {
    const outbox = createExportOutbox(db);
    outbox.startQueueing();
    const a = nextCall();
    store.writeEvents([finished(a)]);
    store.writeEvents([updated(withLateStderr(a, 'late\n'))]);
    const b = nextCall();
    store.writeEvents([finished(b), updated(withLateStderr(b, 'late\n'))]);
    // An update of a row still running (its finish was lost) is its first finish.
    const c = nextCall();
    store.writeEvents([{ type: 'call.started', call: { ...c, status: 'running', outcome: null, endedAtUs: null, durationUs: null } }]);
    store.writeEvents([updated(withLateStderr(c, 'x'))]);
    expect(outbox.entriesAfter(0, 100).map((e) => [e.kind, e.ref])).toEqual([
      ['call', a.id],
      ['call-updated', a.id],
      ['call', b.id],
      ['call', c.id],
    ]);
    expect(store.getCall(a.id)!.stderr.bytes.toString()).toBe('late\n');
    expect(store.getCall(b.id)!.stderr.bytes.toString()).toBe('late\n');
    // Export off: the change is still stored, nothing is queued.
    outbox.stopQueueing();
    store.writeEvents([updated(withLateStderr(a, 'later\n'))]);
    expect(outbox.entriesAfter(0, 100)).toHaveLength(4);
    expect(store.getCall(a.id)!.stderr.bytes.toString()).toBe('later\n');
  });

  it('keeps the outbox sequence across migration 12, which rebuilds the table for call-updated', () => {
    const file = path.join(dir, 'v10.db');
    const old = new BetterSqlite3(file);
    migrate(old, file, MIGRATIONS.filter((m) => m.version <= 10));
    old.exec("INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('call', 'a', 1), ('call', 'b', 2)");
    old.exec("UPDATE otel_watermarks SET watermark = 2; DELETE FROM otel_outbox");
    expect(migrate(old, file)).toEqual(MIGRATIONS.filter((m) => m.version > 10).map((m) => m.version));
    old.exec("INSERT INTO otel_outbox (kind, ref, queued_us) VALUES ('call-updated', 'a', 3)");
    expect(old.prepare('SELECT seq, kind FROM otel_outbox').all()).toEqual([{ seq: 3, kind: 'call-updated' }]);
    old.close();
  });

  it('keeps its sequence going up after every entry was deleted, so a watermark never sees a number twice', () => {
    const outbox = createExportOutbox(db);
    outbox.startQueueing();
    store.writeEvents([finished(nextCall()), finished(nextCall())]);
    const last = outbox.entriesAfter(0, 10).at(-1)!.seq;
    outbox.advance({ traces: last, logs: last });
    expect(outbox.entriesAfter(0, 10)).toEqual([]);
    store.writeEvents([finished(nextCall())]);
    expect(outbox.entriesAfter(0, 10)[0]!.seq).toBeGreaterThan(last);
  });

  it('skips what is over the bounds, oldest first, and says how many per signal', () => {
    const outbox = createExportOutbox(db);
    outbox.startQueueing();
    store.writeEvents(Array.from({ length: 10 }, () => finished(nextCall())));
    outbox.advance({ traces: outbox.entriesAfter(0, 100)[3]!.seq });
    expect(outbox.trim({ maxEntries: 4, minQueuedUs: 0 })).toEqual({ traces: 2, logs: 6 });
    expect(outbox.waiting('traces')).toBe(4);
    expect(outbox.waiting('logs')).toBe(4);
    expect(outbox.trim({ maxEntries: 100, minQueuedUs: Date.now() * 1000 + 1e9 })).toEqual({ traces: 4, logs: 4 });
    expect(outbox.waiting('logs')).toBe(0);
  });
});

describe('the OpenTelemetry exporter', () => {
  it('sends each call as spans (delegated calls and helpers as children) and a log record, decoded with the official protos', async () => {
    const e = exporter();
    e.start();
    const tree = syntheticTree((t += 10_000));
    store.writeEvents(tree.events);
    e.notify();
    await until('the spans', () => receiver.spans.length >= 4 && receiver.logs.length >= 2);
    const bridge = receiver.spans.find((s) => s.attributes['cni.call.id'] === tree.root.id)!;
    const hostLocal = receiver.spans.find((s) => s.attributes['cni.call.id'] === tree.child.id && s.name.startsWith('CNI'))!;
    expect(bridge.name).toBe('CNI ADD bridge');
    expect(hostLocal.name).toBe('CNI ADD host-local');
    expect(hostLocal.parentSpanId).toBe(bridge.spanId);
    expect(hostLocal.traceId).toBe(bridge.traceId);
    expect(bridge.startNs).toBe(BigInt(Math.floor(tree.root.startedAtUs)) * 1000n);
    expect(bridge.resource).toMatchObject({ 'service.name': 'cnirec', 'service.version': '0.0.0-test', 'host.name': 'test-host', 'telemetry.sdk.language': 'nodejs' });
    const helpers = receiver.spans.filter((s) => s.name === 'iptables -t nat -A CNI-x');
    expect(helpers.map((h) => h.parentSpanId).sort()).toEqual([bridge.spanId, hostLocal.spanId].sort());
    expect(receiver.logs.map((l) => l.spanId).sort()).toEqual([callSpanId(tree.root.id), callSpanId(tree.child.id)].sort());
    expect(receiver.requests.every((r) => r.contentType === 'application/x-protobuf')).toBe(true);
    await until('idle', () => e.status().state === 'idle' && e.status().backlog === 0);
    expect(e.status()).toMatchObject({ traces: { exported: 4, failedExports: 0 }, logs: { exported: 2 }, skipped: { backlogFull: 0, tooOld: 0, pruned: 0, rejected: 0 } });
  });

  it('sends a call changed after its span went out as a log record linked to that span, and no second span', async () => {
    const e = exporter();
    e.start();
    const call = nextCall();
    store.writeEvents([finished(call)]);
    e.notify();
    await until('the span', () => callSpans().length === 1 && receiver.logs.length === 1);
    store.writeEvents([updated(withLateStderr(call, 'late output\n'))]);
    e.listener.onEvents([updated(call)]);
    // The receiver's protos predate LogRecord.event_name: the body says what it is.
    const update = await until('the update', () => receiver.logs.find((l) => String(l.body).includes('updated after the plugin exited')));
    expect(update.spanId).toBe(callSpanId(call.id));
    expect(update.traceId).toBe(callSpans()[0]!.traceId);
    expect(update.body).toContain('stderr after exit (12 bytes): late output');
    expect(update.attributes).toMatchObject({ 'cni.call.id': call.id, 'cni.stderr.after_exit_bytes': 12 });
    await until('idle', () => e.status().state === 'idle' && e.status().backlog === 0);
    expect(callSpans()).toHaveLength(1);
    expect(receiver.logs).toHaveLength(2);
  });

  it('keeps calls while the receiver is down, logs the outage once, and sends every call exactly once when it is back', async () => {
    const e = exporter();
    e.start();
    await receiver.stop();
    const calls = Array.from({ length: 30 }, () => nextCall({ helpers: [] }));
    for (const c of calls) {
      store.writeEvents([finished(c)]);
      e.notify();
      await new Promise((r) => setTimeout(r, 10));
    }
    await until('failures', () => e.status().traces!.failedExports >= 2 && e.status().state === 'failing');
    expect(e.status().backlog).toBe(30);
    expect(e.status().failingSince).not.toBeNull();
    await receiver.start();
    await until('all calls', () => callSpans().length >= 30 && receiver.logs.length >= 30 && e.status().state === 'idle');
    await new Promise((r) => setTimeout(r, 300));
    expect(sortedIds(callIdsOf(callSpans()))).toEqual(sortedIds(calls.map((c) => c.id)));
    expect(sortedIds(callIdsOf(receiver.logs))).toEqual(sortedIds(calls.map((c) => c.id)));
    expect(logLines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['cannot send to the OpenTelemetry collector; calls stay queued in the database and are sent when it is back']);
    expect(logLines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual(['OpenTelemetry export works again; sending what was recorded meanwhile']);
    expect(e.status()).toMatchObject({ state: 'idle', backlog: 0, failingSince: null });
  });

  it('sends what a stopped exporter left behind from the next one on the same database, once', async () => {
    await receiver.stop();
    const first = exporter();
    first.start();
    const before = Array.from({ length: 5 }, () => nextCall({ helpers: [] }));
    store.writeEvents(before.map(finished));
    first.notify();
    await until('a failure', () => first.status().traces!.failedExports >= 1);
    await first.stop();
    store.close();

    // A new daemon: the database reopened, a new exporter.
    db = openDatabase(dbFile);
    store = createCallStore(db);
    const second = exporter({}, {}, db);
    const after = [nextCall({ helpers: [] })];
    store.writeEvents(after.map(finished));
    await receiver.start();
    second.start();
    await until('all calls', () => callSpans().length >= 6 && receiver.logs.length >= 6);
    await new Promise((r) => setTimeout(r, 300));
    expect(sortedIds(callIdsOf(callSpans()))).toEqual(sortedIds([...before, ...after].map((c) => c.id)));
    expect(receiver.logs).toHaveLength(6);
  });

  it('retries a 503 within the request and sends once it is accepted', async () => {
    receiver.respondWith(503);
    const e = exporter({ OTEL_EXPORTER_OTLP_TIMEOUT: '5000' });
    e.start();
    const call = nextCall({ helpers: [] });
    store.writeEvents([finished(call)]);
    e.notify();
    await until('a refused request', () => receiver.requests.some((r) => r.status === 503));
    receiver.respondWith(200);
    await until('the span', () => callSpans().length === 1 && receiver.logs.length === 1, 15_000);
    expect(callIdsOf(callSpans())).toEqual([call.id]);
  });

  it('skips and counts a batch the collector refuses with 400, and goes on with the next', async () => {
    receiver.respondWith(400);
    const e = exporter();
    e.start();
    store.writeEvents([finished(nextCall())]);
    e.notify();
    await until('the refusal counted', () => e.status().skipped.rejected >= 1 && e.status().backlog === 0);
    receiver.respondWith(200);
    const next = nextCall({ helpers: [] });
    store.writeEvents([finished(next)]);
    e.notify();
    await until('the next call', () => callSpans().length === 1);
    expect(callIdsOf(callSpans())).toEqual([next.id]);
    expect(logLines.some((l) => l.level === 'warn' && /refused a batch/.test(l.msg))).toBe(true);
  });

  it('never sends a span twice when only the logs endpoint fails, and sends the logs once it works', async () => {
    const logsReceiver = await startOtlpReceiver();
    try {
      await logsReceiver.stop();
      const e = exporter({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: `${logsReceiver.url}/v1/logs` });
      e.start();
      const calls = Array.from({ length: 3 }, () => nextCall({ helpers: [] }));
      store.writeEvents(calls.map(finished));
      e.notify();
      await until('spans', () => callSpans().length === 3);
      await until('log failures', () => e.status().logs!.failedExports >= 3);
      expect(callSpans()).toHaveLength(3);
      await logsReceiver.start();
      await until('logs', () => logsReceiver.logs.length === 3);
      await new Promise((r) => setTimeout(r, 300));
      expect(callSpans()).toHaveLength(3);
      expect(receiver.logs).toHaveLength(0);
    } finally {
      await logsReceiver.close();
    }
  });

  it('skips a backlog over its bounds and what retention deleted first, and counts both', async () => {
    await receiver.stop();
    const e = exporter({}, { maxBacklogEntries: 5, pollMs: 20 });
    const calls = Array.from({ length: 8 }, () => nextCall({ helpers: [] }));
    store.writeEvents(calls.map(finished));
    db.prepare('DELETE FROM calls WHERE id = ?').run(calls[7]!.id);
    e.start();
    await until('the trim', () => e.status().skipped.backlogFull === 3);
    await receiver.start();
    await until('the rest', () => e.status().skipped.pruned === 1 && e.status().backlog === 0, 15_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(e.status().skipped).toEqual({ backlogFull: 3, tooOld: 0, pruned: 1, rejected: 0 });
    expect(sortedIds(callIdsOf(callSpans()))).toEqual(sortedIds(calls.slice(3, 7).map((c) => c.id)));
  });

  it('sends tracer gaps and findings as log records, a finding linked to its call span', async () => {
    const e = exporter();
    e.start();
    const call = nextCall({ helpers: [] });
    store.writeEvents([finished(call)]);
    store.recordTracerEvent('gap-started', { reason: 'bpftrace exited with code 1', incompleteCalls: 2 }, Date.now() * 1000);
    const findings = createFindingsLog(db);
    findings.open('del-loop', `${call.containerId}/eth0`, { message: 'DEL of c0ffee eth0 failed 3 times', containerId: call.containerId, callId: call.id }, Date.now());
    findings.resolve('del-loop', `${call.containerId}/eth0`, Date.now());
    e.notify();
    await until('the log records', () => receiver.logs.length >= 4);
    const gap = receiver.logs.find((l) => l.attributes['cnirec.tracer.event'] === 'gap-started')!;
    expect(gap).toMatchObject({ severityText: 'WARN', attributes: { 'cnirec.tracer.reason': 'bpftrace exited with code 1', 'cnirec.tracer.incomplete_calls': 2 } });
    expect(String(gap.body)).toMatch(/stopped recording/);
    const opened = receiver.logs.find((l) => l.attributes['cnirec.finding.state'] === 'opened')!;
    expect(opened).toMatchObject({ severityText: 'WARN', body: 'Finding del-loop: DEL of c0ffee eth0 failed 3 times', spanId: callSpanId(call.id) });
    expect(receiver.logs.some((l) => l.attributes['cnirec.finding.state'] === 'resolved')).toBe(true);
    expect(spanNames()).toEqual(['CNI ADD bridge']);
  });

  it("sends the container runtime's NetworkReady=false, as it opens and resolves, as log records", async () => {
    const e = exporter();
    e.start();
    const tracker = createRuntimeTracker(db, { timing: leakTimingFor(1000), onError: (err) => { throw err; } });
    const snapshot = (atMs: number, networkReady: boolean) => ({
      atMs,
      endpoint: '/run/containerd/containerd.sock',
      reachable: true,
      version: { name: 'containerd', version: '1.6.20', apiVersion: 'v1' },
      conditions: [{ type: 'NetworkReady', status: networkReady, reason: networkReady ? '' : 'NetworkPluginNotReady', message: networkReady ? '' : 'cni plugin not initialized' }],
      sandboxes: null,
      listedAtMs: null,
      problem: null,
      answeringSinceMs: atMs,
    });
    tracker.onRuntimeSnapshot(snapshot(Date.now(), false));
    tracker.onRuntimeSnapshot(snapshot(Date.now() + 1000, true));
    e.notify();
    await until('the log records', () => receiver.logs.filter((l) => l.attributes['cnirec.finding.kind'] === 'network-not-ready').length >= 2);
    const opened = receiver.logs.find((l) => l.attributes['cnirec.finding.kind'] === 'network-not-ready' && l.attributes['cnirec.finding.state'] === 'opened')!;
    expect(opened.severityText).toBe('WARN');
    expect(String(opened.body)).toMatch(/^Finding network-not-ready: containerd 1\.6\.20 at \/run\/containerd\/containerd\.sock reports NetworkReady=false since .* \(NetworkPluginNotReady: cni plugin not initialized\)/);
    expect(receiver.logs.some((l) => l.attributes['cnirec.finding.kind'] === 'network-not-ready' && l.attributes['cnirec.finding.state'] === 'resolved')).toBe(true);
  });

  it('speaks http/json when asked', async () => {
    const e = exporter({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    e.start();
    const call = nextCall();
    store.writeEvents([finished(call)]);
    e.notify();
    await until('the spans', () => receiver.spans.length === 2 && receiver.logs.length === 1);
    expect(receiver.requests.every((r) => r.contentType.startsWith('application/json'))).toBe(true);
    expect(receiver.spans[0]!.spanId).toBe(callSpanId(call.id));
  });

  it('sends the headers it was given', async () => {
    const e = exporter({ OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20t0k,X-Scope-OrgID=tenant-1' });
    e.start();
    store.writeEvents([finished(nextCall())]);
    e.notify();
    await until('a request', () => receiver.requests.length >= 2);
    expect(receiver.requests[0]!.headers).toMatchObject({ authorization: 'Bearer t0k', 'x-scope-orgid': 'tenant-1' });
  });
});
