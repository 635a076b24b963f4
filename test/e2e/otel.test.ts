/**
 * OpenTelemetry export end to end: the real daemon with real bpftrace records real plugins (bridge,
 * host-local, a bash plugin running tc, jq and nsenter) and exports them over OTLP/HTTP to a receiver
 * this test starts, which decodes every request with the official OTLP .proto definitions. What
 * arrives is checked against what was sent to the plugins and what the daemon stored.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { callSpanId, helperSpanId } from '../../otel/map/trace-ids.js';
import type { StoredCall } from '../../store/index.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../bench/lib/otlp-receiver.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { configBytes, createTestBridgeNetwork, withNetns, withPrevResult, type Netns, type TestBridgeNetwork } from './support/netns.js';
import { CNI_BIN_DIR, execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const TC_SHAPER = path.resolve(import.meta.dirname, 'fixtures/plugins/tc-shaper.sh');
const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, 'fixtures/plugins');
// Answers at once and exits, leaving `( sleep $BG_SLEEP; echo late >&2 ) &` holding its stderr.
const BG_CHILD = path.join(FIXTURE_PLUGINS, 'bg-child.sh');
const run = Date.now().toString(36);
// Short request timeouts and backoff caps keep the outage tests quick; production defaults are 10 s and 30 s.
const OTEL_ENV = { OTEL_EXPORTER_OTLP_TIMEOUT: '1000', OTEL_RESOURCE_ATTRIBUTES: `k8s.node.name=e2e-node-${run}` };

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const usToNs = (us: number) => BigInt(Math.floor(us)) * 1000n;
const callSpansOf = (receiver: OtlpReceiver, ids: ReadonlySet<string>) => receiver.spans.filter((s) => s.name.startsWith('CNI ') && ids.has(String(s.attributes['cni.call.id'])));
const logsOf = (receiver: OtlpReceiver, ids: ReadonlySet<string>) => receiver.logs.filter((l) => ids.has(String(l.attributes['cni.call.id'])));

async function until<T>(what: string, probe: () => T | null | false | undefined | Promise<T | null | false | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Each call id once among the call spans and once among the log records: the exactly-once check. */
function expectExactlyOnce(receiver: OtlpReceiver, calls: readonly StoredCall[]) {
  const ids = new Set(calls.map((c) => c.id));
  const spanIds = callSpansOf(receiver, ids).map((s) => String(s.attributes['cni.call.id'])).sort();
  const logIds = logsOf(receiver, ids).map((l) => String(l.attributes['cni.call.id'])).sort();
  const expected = [...ids].sort();
  expect(spanIds).toEqual(expected);
  expect(logIds).toEqual(expected);
  // Helper spans too: no span id twice.
  const all = receiver.spans.map((s) => s.spanId);
  expect(new Set(all).size).toBe(all.length);
}

async function bridgeAddDel(net: TestBridgeNetwork, ns: Netns, containerId: string, extraEnv: Record<string, string> = {}) {
  const base = { plugin: `${CNI_BIN_DIR}/bridge`, containerId, netns: ns.path, ifname: 'eth0', cniArgs: podCniArgs(`otel-${run}`, `web-${containerId}`, `uid-${containerId}`, containerId), extraEnv };
  const add = await execPlugin({ ...base, command: 'ADD', stdin: configBytes(net.config) });
  expect(add.exitCode, add.stderr.toString()).toBe(0);
  const check = await execPlugin({ ...base, command: 'CHECK', stdin: configBytes(withPrevResult(net.config, add.stdout)) });
  expect(check.exitCode, check.stdout.toString()).toBe(0);
  const del = await execPlugin({ ...base, command: 'DEL', stdin: configBytes(net.config) });
  expect(del.exitCode).toBe(0);
}

describe.runIf(canRun)('OpenTelemetry export with the real daemon, tracer and plugins', () => {
  let receiver: OtlpReceiver;
  let daemon: RunningDaemon;
  let net: TestBridgeNetwork;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    net = await createTestBridgeNetwork('cnirec-otel');
    daemon = await startDaemon({ extraArgs: ['--otlp-endpoint', receiver.url], env: OTEL_ENV });
  });
  afterAll(async () => {
    await daemon?.stop();
    await net?.cleanup();
    await receiver?.close();
  });

  it('makes a call with a TRACEPARENT a child span of that parent, at the recorded times, with its helper processes as child spans', async () => {
    const traceId = hex(16);
    const parentSpanId = hex(8);
    const ns = await withNetns('cnirec-otel-tp');
    try {
      const containerId = `tp${run}`;
      const before = Date.now();
      const res = await execPlugin({
        plugin: TC_SHAPER,
        command: 'ADD',
        containerId,
        netns: ns.path,
        ifname: 'eth0',
        stdin: configBytes({ cniVersion: '1.0.0', name: 'shaped', type: 'tc-shaper', device: 'lo' }),
        extraEnv: { TRACEPARENT: `00-${traceId}-${parentSpanId}-01`, TRACESTATE: 'containerd=e2e' },
      });
      const after = Date.now();
      expect(res.exitCode, res.stderr.toString()).toBe(0);
      const [call] = await daemon.waitFor('the tc-shaper call', () => {
        const c = daemon.callsFor(containerId);
        return c.length === 1 ? c : null;
      });
      expect(call!.helpers.length).toBeGreaterThanOrEqual(2);
      const span = await until('the call span', () => receiver.spans.find((s) => s.spanId === callSpanId(call!.id)));
      expect(span).toMatchObject({ traceId, parentSpanId, traceState: 'containerd=e2e', name: 'CNI ADD tc-shaper.sh', status: { code: 0, message: '' } });
      // The recorded times, to the microsecond, and so within a millisecond of what the test saw.
      expect(span.startNs).toBe(usToNs(call!.startedAtUs));
      expect(span.endNs).toBe(usToNs(call!.endedAtUs!));
      expect(Number(span.startNs / 1_000_000n)).toBeGreaterThanOrEqual(before - 1);
      expect(Number(span.endNs / 1_000_000n)).toBeLessThanOrEqual(after + 1);
      expect(span.attributes).toMatchObject({ 'cni.command': 'ADD', 'cni.plugin': 'tc-shaper.sh', 'container.id': containerId, 'cni.traceparent': `00-${traceId}-${parentSpanId}-01`, 'process.exit.code': 0 });
      expect(span.resource).toMatchObject({ 'service.name': 'cnirec', 'k8s.node.name': `e2e-node-${run}` });

      const helpers = await until('the helper spans', () => {
        const h = receiver.spans.filter((s) => s.parentSpanId === span.spanId);
        return h.length === call!.helpers.length ? h : null;
      });
      for (const stored of call!.helpers) {
        const h = helpers.find((s) => s.spanId === helperSpanId(call!.id, stored.seq))!;
        expect(h.traceId).toBe(traceId);
        expect(h.startNs).toBe(usToNs(stored.startedAtUs));
        // A helper whose exit the tracer did not see (e.g. one still running when the plugin exited) ends with its call.
        expect(h.endNs, `${stored.argv.join(' ')} ended ${stored.endedAtUs}`).toBe(usToNs(stored.endedAtUs ?? call!.endedAtUs!));
        if (stored.endedAtUs === null) expect(h.attributes['cni.call.end_unknown']).toBe(true);
        expect(h.attributes['process.pid']).toBe(stored.pid);
        expect(h.startNs).toBeGreaterThanOrEqual(span.startNs);
        expect(h.endNs).toBeLessThanOrEqual(span.endNs);
      }
      expect(helpers.map((h) => h.name).join('\n')).toMatch(/\btc qdisc replace dev lo root tbf\b/);
      const log = await until('the log record', () => receiver.logs.find((l) => l.spanId === span.spanId));
      expect(log).toMatchObject({ traceId, severityText: 'INFO' });
    } finally {
      await ns.remove();
    }
  });

  it('sends output a background child wrote after the plugin exited as call.updated on the tail and as a log record linked to the span', async () => {
    const containerId = `bgc${run}`;
    const tail: { type: string; call?: { id: string; containerId: string | null; status: string; payload: { stderr: { bytes: number } }; outputAfterExit: { stdout: number | null; stderr: number | null } } }[] = [];
    const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail`);
    try {
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.on('message', (d: Buffer) => {
        const m = JSON.parse(d.toString('utf8')) as (typeof tail)[number];
        if (m.call?.containerId === containerId) tail.push(m);
      });
      // The child writes 7 s after the plugin exited: well after the call was published finished (a descendant
      // whose exit has not come is waited for 5 s, as long as a CPU buffer may be read late).
      const res = await execPlugin({
        plugin: BG_CHILD,
        command: 'ADD',
        containerId,
        netns: '/var/run/netns/none',
        ifname: 'eth0',
        cniPath: `${FIXTURE_PLUGINS}:${CNI_BIN_DIR}`,
        stdin: '{"cniVersion":"1.0.0","name":"bgchild"}',
        extraEnv: { BG_SLEEP: '7' },
        drainTimeoutMs: 15_000,
      });
      expect(res.exitCode).toBe(0);
      const late = res.stderr.indexOf('late\n');
      expect(late).toBeGreaterThan(0);
      expect(res.stderr.subarray(late).toString()).toBe('late\n');

      // The tail: started, finished without the late bytes, then updated with them; never a second finish.
      await until('the update on the tail', () => tail.some((m) => m.type === 'call.updated'));
      await new Promise((r) => setTimeout(r, 500));
      expect(tail.map((m) => m.type)).toEqual(['call.started', 'call.finished', 'call.updated']);
      const [, finishedMsg, updatedMsg] = tail;
      expect(finishedMsg!.call!.payload.stderr.bytes).toBe(late);
      expect(finishedMsg!.call!.outputAfterExit.stderr).toBeNull();
      expect(updatedMsg!.call).toMatchObject({ id: finishedMsg!.call!.id, status: 'finished', payload: { stderr: { bytes: res.stderr.length } }, outputAfterExit: { stdout: null, stderr: late } });

      const [call] = daemon.callsFor(containerId);
      expect(call!.stderr.bytes.equals(res.stderr)).toBe(true);

      // OTLP: one span (it cannot change once sent), its log record, and the update linked to it with the late bytes.
      const ids = new Set([call!.id]);
      const logs = await until('the update log record', () => {
        const l = logsOf(receiver, ids);
        return l.length >= 2 ? l : null;
      });
      const spans = callSpansOf(receiver, ids);
      expect(spans).toHaveLength(1);
      const update = logs.find((l) => String(l.body).includes('updated after the plugin exited'));
      expect(update, JSON.stringify(logs.map((l) => l.body))).toBeDefined();
      expect(update!.spanId).toBe(spans[0]!.spanId);
      expect(update!.traceId).toBe(spans[0]!.traceId);
      expect(String(update!.body)).toContain('stderr after exit (5 bytes): late\n');
      expect(update!.attributes).toMatchObject({ 'cni.stderr.after_exit_bytes': 5 });
      const first = logs.find((l) => l !== update)!;
      // The span's own log record was built before the child wrote: the early bytes only.
      expect(String(first.body)).toContain(`stderr (${late} bytes): early: 39 bytes of config\n`);
      expect(String(first.body)).not.toContain('late\n');
    } finally {
      ws.close();
    }
  });

  it('sends bridge ADD and host-local ADD as parent and child, and puts the later DEL of the sandbox in the same trace', async () => {
    const ns = await withNetns('cnirec-otel-tree');
    try {
      const containerId = `tree${run}`;
      await bridgeAddDel(net, ns, containerId);
      const calls = await daemon.waitFor('ADD, CHECK, DEL and their host-local calls', () => {
        const c = daemon.callsFor(containerId);
        return c.length >= 6 ? c : null;
      });
      const byPlugin = (command: string, plugin: string) => calls.find((c) => c.command === command && c.plugin === plugin)!;
      const spanOf = (c: StoredCall) => until(`the span of ${c.command} ${c.plugin}`, () => receiver.spans.find((s) => s.spanId === callSpanId(c.id)));
      const add = await spanOf(byPlugin('ADD', 'bridge'));
      const ipamAdd = await spanOf(byPlugin('ADD', 'host-local'));
      const del = await spanOf(byPlugin('DEL', 'bridge'));
      const check = await spanOf(byPlugin('CHECK', 'bridge'));
      expect(add.name).toBe('CNI ADD bridge');
      expect(ipamAdd.name).toBe('CNI ADD host-local');
      expect(ipamAdd.parentSpanId).toBe(add.spanId);
      expect(ipamAdd.traceId).toBe(add.traceId);
      expect(add.parentSpanId).toBe('');
      // No TRACEPARENT: the attachment's calls share one trace, each a root span.
      expect(del.traceId).toBe(add.traceId);
      expect(check.traceId).toBe(add.traceId);
      expect(del.parentSpanId).toBe('');
      expect(add.attributes).toMatchObject({ 'k8s.namespace.name': `otel-${run}`, 'k8s.pod.name': `web-${containerId}`, 'k8s.pod.uid': `uid-${containerId}`, 'cni.network.name': net.name, 'cni.ifname': 'eth0' });
      const stdin = add.events.find((e) => e.name === 'cni.stdin')!;
      expect(stdin.attributes['cni.payload']).toBe(configBytes(net.config).toString());
      await until('every call once', () => callSpansOf(receiver, new Set(calls.map((c) => c.id))).length === calls.length);
    } finally {
      await ns.remove();
    }
  });

  it('gives a failing call status ERROR with the CNI error message, and sends no secret of its config in spans or logs', async () => {
    const secret = `s3cr3t-otel-${run}`;
    const containerId = `fail${run}`;
    const config = { cniVersion: '1.0.0', name: `broken-${run}`, type: 'bridge', password: secret, ipam: { type: 'no-such-ipam', token: secret } };
    const res = await execPlugin({ plugin: `${CNI_BIN_DIR}/bridge`, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', stdin: configBytes(config) });
    expect(res.exitCode).not.toBe(0);
    const message = (JSON.parse(res.stdout.toString()) as { msg: string }).msg;
    const [call] = await daemon.waitFor('the failing call', () => {
      const c = daemon.callsFor(containerId);
      return c.length === 1 ? c : null;
    });
    const span = await until('its span', () => receiver.spans.find((s) => s.spanId === callSpanId(call!.id)));
    expect(span.status).toEqual({ code: 2, message });
    expect(span.attributes['cni.error.msg']).toBe(message);
    const log = await until('its log record', () => receiver.logs.find((l) => l.spanId === span.spanId));
    expect(log.severityText).toBe('ERROR');
    expect(String(log.body)).toContain(message);
    // Redacted before it was stored, so before it was sent: the marker is there, the secret is not.
    expect(String(span.events.find((e) => e.name === 'cni.stdin')!.attributes['cni.payload'])).toContain('"password":"[redacted]"');
    expect(span.events.find((e) => e.name === 'cni.stdin')!.attributes['cni.payload.redacted_pointers']).toEqual(expect.arrayContaining(['/password', '/ipam/token']));
    expect(String(log.body)).toContain('[redacted]');
    expect(JSON.stringify([receiver.spans, receiver.logs], (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(secret);
    expect(receiver.rawBodies.some((b) => b.includes(secret))).toBe(false);
  });

  it('sends every call exactly once after the receiver was down while they were made', async () => {
    await receiver.stop();
    const ns = await withNetns('cnirec-otel-down');
    try {
      const containerId = `down${run}`;
      await bridgeAddDel(net, ns, containerId);
      const calls = await daemon.waitFor('the calls', () => {
        const c = daemon.callsFor(containerId);
        return c.length >= 6 ? c : null;
      });
      await until('a failed export', async () => {
        const health = (await (await fetch(`${daemon.url}/healthz`)).json()) as { otel: { traces: { failedExports: number } } };
        return health.otel.traces.failedExports > 0;
      });
      expect(callSpansOf(receiver, new Set(calls.map((c) => c.id)))).toEqual([]);
      await receiver.start();
      await until('every call', () => logsOf(receiver, new Set(calls.map((c) => c.id))).length === calls.length && callSpansOf(receiver, new Set(calls.map((c) => c.id))).length === calls.length, 60_000);
      await new Promise((r) => setTimeout(r, 1500));
      expectExactlyOnce(receiver, calls);
      const outageLines = daemon.logs().split('\n').filter((l) => l.includes('cannot send to the OpenTelemetry collector'));
      expect(outageLines).toHaveLength(1);
    } finally {
      await ns.remove();
    }
  });

  it('sends every call exactly once across a daemon restart made while the receiver was down', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-otel-restart-'));
    const dbPath = path.join(dir, 'cnirec.db');
    const own = await startOtlpReceiver();
    let first: RunningDaemon | null = null;
    let second: RunningDaemon | null = null;
    const ns = await withNetns('cnirec-otel-restart');
    try {
      await own.stop();
      first = await startDaemon({ dbPath, extraArgs: ['--otlp-endpoint', own.url], env: OTEL_ENV });
      const beforeId = `rsa${run}`;
      await bridgeAddDel(net, ns, beforeId);
      const before = await first.waitFor('the first calls', () => {
        const c = first!.callsFor(beforeId);
        return c.length >= 6 ? c : null;
      });
      expect((await first.stop()).code).toBe(0);
      first = null;

      second = await startDaemon({ dbPath, extraArgs: ['--otlp-endpoint', own.url], env: OTEL_ENV });
      const afterId = `rsb${run}`;
      await bridgeAddDel(net, ns, afterId);
      const after = await second.waitFor('the later calls', () => {
        const c = second!.callsFor(afterId);
        return c.length >= 6 ? c : null;
      });
      await own.start();
      const all = [...before, ...after];
      const ids = new Set(all.map((c) => c.id));
      await until('every call', () => callSpansOf(own, ids).length === all.length && logsOf(own, ids).length === all.length, 60_000);
      await new Promise((r) => setTimeout(r, 1500));
      expectExactlyOnce(own, all);
      // The first daemon's own start and stop went out as log records too, once each.
      expect(own.logs.filter((l) => l.attributes['cnirec.tracer.event'] === 'stopped')).toHaveLength(1);
    } finally {
      await ns.remove();
      await first?.stop();
      await second?.stop();
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(canRun)('recording with the OpenTelemetry collector down the whole time', () => {
  it('records, serves the API and the tail as usual, and counts the failed exports', async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const daemon = await startDaemon({ extraArgs: ['--otlp-endpoint', gone.url], env: OTEL_ENV });
    const net = await createTestBridgeNetwork('cnirec-otel-gone');
    const ns = await withNetns('cnirec-otel-gone');
    const tail: string[] = [];
    const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail?namespace=otel-${run}`);
    try {
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      ws.on('message', (d: Buffer) => tail.push(d.toString('utf8')));
      const containerId = `gone${run}`;
      await bridgeAddDel(net, ns, containerId);
      const calls = await daemon.waitFor('the calls', () => {
        const c = daemon.callsFor(containerId);
        return c.length >= 6 ? c : null;
      });
      expect(calls.every((c) => c.status === 'finished' && c.ok)).toBe(true);
      const listed = (await (await fetch(`${daemon.url}/api/v1/calls?containerId=${containerId}`)).json()) as { items: unknown[] };
      expect(listed.items).toHaveLength(calls.length);
      await until('the tail', () => tail.filter((m) => m.includes('"call.finished"') && m.includes(containerId)).length >= 3);
      const health = await until('failures counted', async () => {
        const h = (await (await fetch(`${daemon.url}/healthz`)).json()) as { status: string; problems: string[]; otel: { state: string; backlog: number; failingSince: string | null; traces: { failedExports: number } } };
        return h.otel.traces.failedExports >= 2 ? h : null;
      });
      expect(health.otel.state).toBe('failing');
      expect(health.otel.failingSince).not.toBeNull();
      expect(health.otel.backlog).toBeGreaterThanOrEqual(6);
      expect(health.problems.some((p) => p.startsWith('OpenTelemetry export fails since'))).toBe(true);
      const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
      expect(metrics).toMatch(/^cnirec_otel_export_up 0$/m);
      expect(metrics).toMatch(/^cnirec_otel_export_failures_total\{signal="traces"\} [1-9]/m);
      expect(daemon.logs().split('\n').filter((l) => l.includes('cannot send to the OpenTelemetry collector'))).toHaveLength(1);
    } finally {
      ws.close();
      await ns.remove();
      await net.cleanup();
      await daemon.stop();
    }
  });
});
