/**
 * The CRI's pure parts: --cri-endpoint as crictl takes it, the sentence for each way a call fails, CRI
 * answers decoded, and the readiness timeline (a transition per change, none per poll).
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_CRI_ENDPOINTS, parseCriEndpoint, pluginDirsOf, type RuntimeSnapshot } from '../../collector/index.js';
import { msOfNanos, sandboxesOf, sandboxStatusOf } from '../../collector/runtime/cri-decode.js';
import { problemOf } from '../../collector/runtime/cri-problem.js';
import { readinessStep } from '../../store/runtime/index.js';

describe('--cri-endpoint', () => {
  it.each([
    ['', { kind: 'auto', candidates: DEFAULT_CRI_ENDPOINTS }],
    ['none', { kind: 'off' }],
    ['/run/containerd/containerd.sock', { kind: 'fixed', path: '/run/containerd/containerd.sock' }],
    ['unix:///var/run/crio/crio.sock', { kind: 'fixed', path: '/var/run/crio/crio.sock' }],
    ['unix:/run/k3s/containerd/containerd.sock', { kind: 'fixed', path: '/run/k3s/containerd/containerd.sock' }],
  ])('takes "%s"', (text, setting) => expect(parseCriEndpoint(text)).toEqual({ ok: true, setting }));

  it.each([
    ['tcp://10.0.0.1:1234', /unix socket path or a unix:\/\/ URL/],
    ['npipe:////./pipe/containerd', /unix socket path or a unix:\/\/ URL/],
    ['run/containerd.sock', /absolute socket path/],
  ])('refuses "%s" in a sentence', (text, message) => {
    const r = parseCriEndpoint(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});

describe('why a CRI call failed', () => {
  const S = '/run/containerd/containerd.sock';
  it.each([
    ['a deadline', { code: 4, details: 'Deadline exceeded after 5.001s' }, 'timeout', /did not answer Status within 5 s/],
    ['no such socket', { code: 14, details: 'No connection established. Last error: connect ENOENT /run/containerd/containerd.sock (2026-01-01T00:00:00.000Z). Resolution note: ' }, 'absent', /No CRI socket at/],
    ['a socket nobody listens on', { code: 14, details: 'No connection established. Last error: connect ECONNREFUSED /run/x.sock' }, 'refused', /refuses connections/],
    ['no permission', { code: 14, details: 'connect EACCES /run/containerd/containerd.sock' }, 'denied', /needs root/],
    ['an HTTP/1 server', { code: 14, details: 'No connection established. Last error: Protocol error (2026-01-01T00:00:00.000Z). Resolution note:' }, 'not-cri', /answers, but not as a CRI runtime \(Protocol error\)/],
    ['another gRPC service', { code: 12, details: 'unknown service runtime.v1.RuntimeService' }, 'not-cri', /not the CRI's runtime.v1 Status/],
    ['an error of the runtime', { code: 2, details: 'server is not initialized yet' }, 'error', /answered Status with an error: server is not initialized yet/],
  ])('%s', (_name, failure, kind, message) => {
    const p = problemOf(S, 'Status', failure, 5000);
    expect(p.kind).toBe(kind);
    expect(p.message).toMatch(message);
    expect(p.message).not.toMatch(/Resolution note|\d{4}-\d\d-\d\dT/);
  });
});

describe('CRI answers decoded', () => {
  it('reads nanoseconds as milliseconds without losing the digits JavaScript numbers cannot hold', () => {
    expect(msOfNanos('1795902848797123456')).toBe(1_795_902_848_797);
    expect(msOfNanos('')).toBe(0);
    expect(msOfNanos(undefined)).toBe(0);
  });

  it('takes what a runtime leaves out as its default, and drops kubectl’s copy of the manifest', () => {
    const [s] = sandboxesOf({
      items: [
        { id: 'abc', metadata: { name: 'web', namespace: 'ns', uid: 'u', attempt: 1 }, state: 'SANDBOX_NOTREADY', created_at: '1000000000', labels: { a: 'b' }, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"env":[{"name":"PASSWORD","value":"x"}]}', keep: 'me' } },
        { metadata: {} },
      ],
    });
    expect(s).toEqual({ id: 'abc', namespace: 'ns', name: 'web', uid: 'u', attempt: 1, state: 'notready', createdAtMs: 1000, labels: { a: 'b' }, annotations: { keep: 'me' }, runtimeHandler: '', ip: null, additionalIps: [] });
    expect(sandboxesOf({})).toEqual([]);
  });

  it('reads the addresses PodSandboxStatus reports', () => {
    expect(sandboxStatusOf({ status: { id: 'abc', metadata: {}, state: 'SANDBOX_READY', network: { ip: '10.1.0.4', additional_ips: [{ ip: 'fd00::4' }] } } })).toMatchObject({ state: 'ready', ip: '10.1.0.4', additionalIps: ['fd00::4'] });
    expect(sandboxStatusOf({ status: { id: 'abc', network: { ip: '' } } })?.ip).toBeNull();
    expect(sandboxStatusOf({})).toBeNull();
  });

  it('finds the plugin dirs in containerd’s verbose Status', () => {
    expect(pluginDirsOf({ cniconfig: JSON.stringify({ PluginDirs: ['/usr/lib/cni', 'relative'], PluginConfDir: '/etc/cni/net.d' }) })).toEqual(['/usr/lib/cni']);
    expect(pluginDirsOf({ cniconfig: 'not json' })).toBeNull();
    expect(pluginDirsOf({})).toBeNull();
  });
});

describe('the readiness timeline', () => {
  const T = 1_800_000_000_000;
  const snap = (atMs: number, over: Partial<RuntimeSnapshot> = {}): RuntimeSnapshot => ({
    atMs,
    endpoint: '/s',
    reachable: true,
    version: { name: 'containerd', version: '1.6.20', apiVersion: 'v1' },
    conditions: [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
    ],
    sandboxes: [],
    listedAtMs: atMs,
    problem: null,
    answeringSinceMs: T,
    ...over,
  });

  it('records the first answer, then only what changes, keeping since when a condition holds', () => {
    const first = readinessStep(new Map(), null, snap(T));
    expect(first.transitions.map((t) => `${t.type}=${t.status}`)).toEqual(['Reachable=true', 'RuntimeReady=true', 'NetworkReady=false']);
    const same = readinessStep(first.conditions, true, snap(T + 5000));
    expect(same.transitions).toEqual([]);
    expect(same.conditions.get('NetworkReady')?.sinceMs).toBe(T);
    const message = readinessStep(same.conditions, true, snap(T + 10_000, { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'other' }] }));
    expect(message.transitions.map((t) => `${t.type}:${t.message}`)).toEqual(['NetworkReady:other']);
    expect(message.conditions.get('NetworkReady')?.sinceMs).toBe(T + 10_000);
  });

  it('records the runtime going away once, keeping its last conditions, and coming back', () => {
    const first = readinessStep(new Map(), null, snap(T));
    const gone = readinessStep(first.conditions, true, snap(T + 1000, { reachable: false, conditions: null, problem: { kind: 'refused', message: 'it refuses' } }));
    expect(gone.transitions).toEqual([{ atMs: T + 1000, endpoint: '/s', type: 'Reachable', status: false, reason: 'refused', message: 'it refuses' }]);
    expect(gone.conditions).toBe(first.conditions);
    expect(readinessStep(gone.conditions, false, snap(T + 2000, { reachable: false, conditions: null, problem: { kind: 'refused', message: 'it refuses' } })).transitions).toEqual([]);
    expect(readinessStep(gone.conditions, false, snap(T + 3000)).transitions.map((t) => t.type)).toEqual(['Reachable']);
  });

  it('makes no timeline for a runtime never found (a node without one)', () => {
    const absent = { reachable: false, conditions: null, problem: { kind: 'absent' as const, message: 'no socket' } };
    expect(readinessStep(new Map(), null, snap(T, absent)).transitions).toEqual([]);
    expect(readinessStep(new Map(), true, snap(T, absent)).transitions.map((t) => `${t.type}=${t.status}`)).toEqual(['Reachable=false']);
  });

  it('makes no timeline when the runtime is not asked', () => {
    expect(readinessStep(new Map(), null, snap(T, { reachable: false, conditions: null, problem: { kind: 'off', message: 'off' } })).transitions).toEqual([]);
  });
});
