import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { afterAll, describe, expect, it } from 'vitest';
import type { CniCall } from '../../collector/types.js';
import { exportIdentity } from '../../otel/index.js';
import { callFacts } from '../../otel/map/call-facts.js';
import { callLogRecord, callUpdateLogRecord } from '../../otel/map/call-log.js';
import { callSpans } from '../../otel/map/call-spans.js';
import { callSpanId, callTrace, helperSpanId } from '../../otel/map/trace-ids.js';
import { createCallStore, openDatabase, type StoredCall } from '../../store/index.js';
import { syntheticCall } from '../support/synthetic-calls.js';

const store = createCallStore(openDatabase(':memory:'));
afterAll(() => store.close());

const identity = exportIdentity({ version: '9.9.9', hostName: 'node-a', attributes: { 'k8s.node.name': 'node-a' } });
const T0 = 1_700_000_000_123_456;

/** A call as the store returns it, after the collector's shape went through the real writer and reader. */
function stored(overrides: Partial<CniCall> = {}): StoredCall {
  const call: CniCall = { ...syntheticCall({ startedAtUs: T0 }), ...overrides };
  store.writeEvents([{ type: 'call.finished', call }]);
  return store.getCall(call.id)!;
}

const traceOf = (c: StoredCall) =>
  callTrace([{ id: c.id, parentId: c.parentId, traceParent: c.traceParent, traceState: c.env.TRACESTATE ?? null, containerId: c.containerId, ifname: c.ifname }]);

const CONFIG = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'podnet', type: 'bridge', password: '[redacted]' }));

describe('a call as spans', () => {
  it('names the network the store named a call by when its stdin was not captured (a STATUS in light mode)', () => {
    const call = stored({ id: 'net-light-1', command: 'STATUS', captureMode: 'light', network: 'kindnet', stdin: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false }, helpers: [] });
    const [span] = callSpans(call, traceOf(call), 'capped', identity);
    expect(span!.attributes['cni.network.name']).toBe('kindnet');
  });

  it('is one span named after command and plugin, with the recorded times to the microsecond', () => {
    const call = stored({ stdin: { bytes: CONFIG, totalBytes: CONFIG.length, truncated: false }, helpers: [] });
    const [span, ...rest] = callSpans(call, traceOf(call), 'capped', identity);
    expect(rest).toEqual([]);
    expect(span!.name).toBe('CNI ADD bridge');
    expect(span!.kind).toBe(SpanKind.INTERNAL);
    expect(span!.startTime).toEqual([1_700_000_000, 123_456_000]);
    expect(span!.endTime).toEqual([1_700_000_000, 124_456_000]);
    expect(span!.status).toEqual({ code: SpanStatusCode.UNSET });
    expect(span!.spanContext().spanId).toBe(callSpanId(call.id));
    expect(span!.parentSpanContext).toBeUndefined();
    expect(span!.resource.attributes).toMatchObject({ 'service.name': 'cnirec', 'service.version': '9.9.9', 'host.name': 'node-a', 'k8s.node.name': 'node-a' });
  });

  it('carries the semantic-convention and cni.* attributes', () => {
    const call = stored({ stdin: { bytes: CONFIG, totalBytes: CONFIG.length, truncated: false }, pod: { namespace: 'default', name: 'web', uid: 'uid-1', infraContainerId: null } });
    expect(callSpans(call, traceOf(call), 'none', identity)[0]!.attributes).toMatchObject({
      'k8s.namespace.name': 'default',
      'k8s.pod.name': 'web',
      'k8s.pod.uid': 'uid-1',
      'container.id': 'c0ffee',
      'process.pid': call.pid,
      'process.parent_pid': 4242,
      'process.executable.path': '/opt/cni/bin/bridge',
      'process.executable.name': 'bridge',
      'process.command_args': ['/opt/cni/bin/bridge'],
      'process.exit.code': 0,
      'cni.command': 'ADD',
      'cni.plugin': 'bridge',
      'cni.ifname': 'eth0',
      'cni.netns': '/var/run/netns/cni-1',
      'cni.network.name': 'podnet',
      'cni.version': '1.0.0',
      'cni.call.id': call.id,
      'cni.call.status': 'finished',
      'cni.caller.name': 'containerd',
    });
  });

  it('has status ERROR with the CNI error message, and the error code and details', () => {
    const err = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', code: 7, msg: 'failed to allocate for range 0: no IP addresses available', details: 'range 10.0.0.0/30' }));
    const call = stored({ outcome: { exitCode: 1, signal: null, coreDumped: false }, stdout: { bytes: err, totalBytes: err.length, truncated: false } });
    const span = callSpans(call, traceOf(call), 'capped', identity)[0]!;
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed to allocate for range 0: no IP addresses available' });
    expect(span.attributes).toMatchObject({ 'cni.error.code': 7, 'cni.error.msg': 'failed to allocate for range 0: no IP addresses available', 'cni.error.details': 'range 10.0.0.0/30', 'process.exit.code': 1, 'error.type': 'cni error 7' });
  });

  it('names the signal of a killed call', () => {
    const call = stored({ outcome: { exitCode: null, signal: 9, coreDumped: false }, stdout: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false } });
    const span = callSpans(call, traceOf(call), 'capped', identity)[0]!;
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'killed by SIGKILL' });
    expect(span.attributes['cni.signal']).toBe('SIGKILL');
    expect(span.attributes['error.type']).toBe('SIGKILL');
    expect(span.attributes['process.exit.code']).toBeUndefined();
  });

  it('marks an incomplete call and ends it at the last thing seen of it', () => {
    const base = syntheticCall({ startedAtUs: T0 });
    const call = stored({
      status: 'incomplete',
      incompleteReason: 'the tracer restarted while the call ran',
      outcome: null,
      endedAtUs: null,
      durationUs: null,
      helpers: [{ ...base.helpers[0]!, startedAtUs: T0 + 50, endedAtUs: T0 + 900 }],
    });
    const [span] = callSpans(call, traceOf(call), 'capped', identity);
    expect(span!.status.code).toBe(SpanStatusCode.UNSET);
    expect(span!.endTime).toEqual([1_700_000_000, 124_356_000]);
    expect(span!.attributes).toMatchObject({ 'cni.call.status': 'incomplete', 'cni.call.incomplete_reason': 'the tracer restarted while the call ran', 'cni.call.end_unknown': true });
  });

  it('has a child span per helper, named by its command line, with its own times and exit', () => {
    const base = syntheticCall({ startedAtUs: T0 });
    const failing = { ...base.helpers[0]!, pid: 99, argv: ['/usr/sbin/tc', 'qdisc', 'add', 'dev', 'eth0', 'root', 'netem'], startedAtUs: T0 + 300, endedAtUs: T0 + 700, outcome: { exitCode: 2, signal: null, coreDumped: false } };
    const call = stored({ helpers: [base.helpers[0]!, failing] });
    const [parent, iptables, tc] = callSpans(call, traceOf(call), 'capped', identity);
    expect(iptables!.name).toBe('iptables -t nat -A CNI-x');
    expect(iptables!.parentSpanContext?.spanId).toBe(parent!.spanContext().spanId);
    expect(iptables!.spanContext().traceId).toBe(parent!.spanContext().traceId);
    expect(iptables!.spanContext().spanId).toBe(helperSpanId(call.id, 0));
    expect(tc!.name).toBe('tc qdisc add dev eth0 root netem');
    expect(tc!.startTime).toEqual([1_700_000_000, 123_756_000]);
    expect(tc!.endTime).toEqual([1_700_000_000, 124_156_000]);
    expect(tc!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'exit code 2' });
    expect(tc!.attributes).toMatchObject({ 'process.pid': 99, 'process.exit.code': 2, 'cni.helper.seq': 1 });
    // The helper's own stdout is an event on its span.
    expect(iptables!.events.map((e) => [e.name, e.attributes?.['cni.payload']])).toEqual([['cni.stdout', 'ok']]);
  });

  it('puts the payloads on events: stdin at the start, stdout and stderr at the end, redactions named', () => {
    const call = stored({
      stdin: { bytes: CONFIG, totalBytes: CONFIG.length, truncated: false, redactions: ['/password'] },
      stdout: { bytes: Buffer.from('{"ips":[]}'), totalBytes: 10, truncated: false },
      stderr: { bytes: Buffer.from('warning\n'), totalBytes: 8, truncated: false },
      helpers: [],
    });
    const span = callSpans(call, traceOf(call), 'capped', identity)[0]!;
    expect(span.events).toEqual([
      { name: 'cni.stdin', time: [1_700_000_000, 123_456_000], droppedAttributesCount: 0, attributes: { 'cni.payload': CONFIG.toString(), 'cni.payload.encoding': 'utf-8', 'cni.payload.bytes': CONFIG.length, 'cni.payload.truncated': false, 'cni.payload.redacted_pointers': ['/password'] } },
      { name: 'cni.stdout', time: [1_700_000_000, 124_456_000], droppedAttributesCount: 0, attributes: { 'cni.payload': '{"ips":[]}', 'cni.payload.encoding': 'utf-8', 'cni.payload.bytes': 10, 'cni.payload.truncated': false } },
      { name: 'cni.stderr', time: [1_700_000_000, 124_456_000], droppedAttributesCount: 0, attributes: { 'cni.payload': 'warning\n', 'cni.payload.encoding': 'utf-8', 'cni.payload.bytes': 8, 'cni.payload.truncated': false } },
    ]);
    expect(callSpans(call, traceOf(call), 'none', identity)[0]!.events).toEqual([]);
  });

  it('is a child of the TRACEPARENT span with the tracestate kept', () => {
    const call = stored({ traceParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', env: { CNI_COMMAND: 'ADD', TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', TRACESTATE: 'vendor=abc' } });
    const [span, helper] = callSpans(call, traceOf(call), 'capped', identity);
    expect(span!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(span!.parentSpanContext).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', isRemote: true });
    expect(span!.spanContext().traceState?.serialize()).toBe('vendor=abc');
    expect(helper!.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
  });
});

describe('a call as a log record', () => {
  it('has a summary body, the payloads per the setting, the span ids and a severity by outcome', () => {
    const err = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', code: 11, msg: 'bridge port in use' }));
    const call = stored({ outcome: { exitCode: 1, signal: null, coreDumped: false }, durationUs: 5_012_300, stdin: { bytes: CONFIG, totalBytes: CONFIG.length, truncated: false, redactions: ['/password'] }, stdout: { bytes: err, totalBytes: err.length, truncated: false } });
    const trace = traceOf(call);
    const record = callLogRecord(call, trace, 'capped', identity);
    expect(record.severityNumber).toBe(SeverityNumber.ERROR);
    expect(record.severityText).toBe('ERROR');
    expect(record.eventName).toBe('cni.call');
    expect(record.spanContext).toMatchObject({ traceId: trace.traceId, spanId: trace.spanId });
    expect(record.hrTime).toEqual([1_700_000_000, 124_456_000]);
    expect(String(record.body).split('\n')).toEqual([
      'CNI ADD bridge default/web eth0 (container c0ffee): failed after 5.01 s: bridge port in use',
      `stdin (${CONFIG.length} bytes, redacted: /password): ${CONFIG.toString()}`,
      `stdout (${err.length} bytes): ${err.toString()}`,
    ]);
    expect(record.attributes).toMatchObject({ 'cni.error.code': 11, 'k8s.pod.name': 'web' });
    expect(String(callLogRecord(call, trace, 'none', identity).body)).not.toContain('\n');
  });

  it('is INFO for a success and WARN for an incomplete call', () => {
    const ok = stored();
    expect(callLogRecord(ok, traceOf(ok), 'none', identity)).toMatchObject({ severityNumber: SeverityNumber.INFO, body: 'CNI ADD bridge default/web eth0 (container c0ffee): ok in 1.0 ms' });
    const lost = stored({ status: 'incomplete', incompleteReason: 'cnirec stopped while the call ran', outcome: null, endedAtUs: null, durationUs: null });
    expect(callLogRecord(lost, traceOf(lost), 'none', identity)).toMatchObject({ severityNumber: SeverityNumber.WARN, body: 'CNI ADD bridge default/web eth0 (container c0ffee): incomplete (cnirec stopped while the call ran)' });
    expect(callFacts(lost).outcome.kind).toBe('incomplete');
  });
});

describe('a call updated after it was exported, as a log record', () => {
  it('is linked to the call span and carries only what was written after the plugin exited, and the helpers', () => {
    const out = Buffer.from('{"cniVersion":"1.0.0"}');
    const call = stored({
      stdout: { bytes: out, totalBytes: out.length, truncated: false },
      stderr: { bytes: Buffer.from('early\nlate\n'), totalBytes: 11, truncated: false },
      stderrAfterExitOffset: 6,
      helpers: [{ pid: 4711, ppid: 1, path: '/usr/bin/sleep', argv: ['sleep', '1'], startedAtUs: T0 + 10, endedAtUs: 1_700_000_001_000_000, outcome: { exitCode: 0, signal: null, coreDumped: false }, stdout: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false }, stderr: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false } }],
    });
    const trace = traceOf(call);
    const record = callUpdateLogRecord(call, trace, 'capped', identity, 1_700_000_002_000_000);
    expect(record.eventName).toBe('cni.call.updated');
    expect(record.spanContext).toMatchObject({ traceId: trace.traceId, spanId: callSpanId(call.id) });
    expect(record.hrTime).toEqual([1_700_000_002, 0]);
    expect(record.severityText).toBe('INFO');
    expect(String(record.body).split('\n')).toEqual([
      'CNI ADD bridge default/web eth0 (container c0ffee): updated after the plugin exited: its descendants wrote 5 bytes to stderr',
      'stderr after exit (5 bytes): late\n',
      'helper /usr/bin/sleep (pid 4711): exit 0 at 2023-11-14T22:13:21.000Z',
    ].join('\n').split('\n'));
    expect(record.attributes).toMatchObject({ 'cni.call.id': call.id, 'cni.stderr.after_exit_bytes': 5, 'cni.helper.count': 1 });
    expect(record.attributes['cni.stdout.after_exit_bytes']).toBeUndefined();
    expect(String(callUpdateLogRecord(call, trace, 'none', identity, 1).body)).not.toContain('late');
  });
});

describe('what a call changed in the kernel, as span events', () => {
  const refused = {
    atUs: T0 + 500,
    pid: 4242,
    netns: 'host',
    object: 'link' as const,
    action: 'add' as const,
    subject: 'cnimtu0 type bridge mtu 70000',
    ok: false,
    error: { errno: 'EINVAL', message: 'mtu greater than device maximum' },
    attributes: {},
  };
  const added = { ...refused, atUs: T0 + 300, subject: 'veth1 type veth peer eth0', ok: true, error: null };
  const message = { atUs: T0 + 510, pid: 4242, process: 'bridge', message: 'mtu greater than device maximum' };

  it('puts each change and each kernel message on the call span, in time order, with cni.change.* attributes', () => {
    const call = stored({ changes: [added, refused], kernelMessages: [message] });
    const [span] = callSpans(call, traceOf(call), 'capped', identity);
    const kernel = span!.events.filter((e) => e.name === 'cni.change' || e.name === 'cni.kernel.message');
    expect(kernel.map((e) => e.name)).toEqual(['cni.change', 'cni.change', 'cni.kernel.message']);
    expect(kernel[1]!.attributes).toMatchObject({
      'cni.change.netns': 'host',
      'cni.change.object': 'link',
      'cni.change.action': 'add',
      'cni.change.subject': 'cnimtu0 type bridge mtu 70000',
      'cni.change.ok': false,
      'cni.change.errno': 'EINVAL',
      'cni.change.message': 'mtu greater than device maximum',
    });
    expect(kernel[2]!.attributes).toMatchObject({ 'cni.kernel.message': 'mtu greater than device maximum', 'cni.kernel.process': 'bridge' });
  });

  it("gives a failed call's status the kernel's words when the plugin's error is a bare errno text", () => {
    const stdout = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', code: 999, msg: 'could not add "cnimtu0": invalid argument' }));
    const call = stored({ outcome: { exitCode: 1, signal: null, coreDumped: false }, stdout: { bytes: stdout, totalBytes: stdout.length, truncated: false }, kernelMessages: [message] });
    const [span] = callSpans(call, traceOf(call), 'capped', identity);
    expect(span!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'could not add "cnimtu0": invalid argument (kernel: mtu greater than device maximum)' });
  });
});
