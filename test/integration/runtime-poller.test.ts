/**
 * The poller and its read-only CRI client against fake runtimes on real unix
 * sockets (test/support/fake-cri.ts): what a poll says of a runtime that
 * answers, of the usual sockets tried in order, and of each way a runtime
 * cannot be asked; sandbox details asked once, their secrets redacted.
 */

import { afterEach, describe, expect, it } from 'vitest';
import { createRedactor, createRuntimePoller, DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, compileKeyPatterns, type RuntimePoller } from '../../collector/index.js';
import { startFakeCri, type FakeCri, type FakeKind } from '../support/fake-cri.js';

const fakes: FakeCri[] = [];
const pollers: RuntimePoller[] = [];
const fake = async (kind: FakeKind = 'cri', state: Parameters<typeof startFakeCri>[1] = {}) => {
  const f = await startFakeCri(kind, state);
  fakes.push(f);
  return f;
};
const poller = (endpoint: Parameters<typeof createRuntimePoller>[0]['endpoint'], extra: Partial<Parameters<typeof createRuntimePoller>[0]> = {}) => {
  const p = createRuntimePoller({ endpoint, intervalMs: 60_000, timeoutMs: 400, ...extra });
  pollers.push(p);
  return p;
};

afterEach(async () => {
  for (const p of pollers.splice(0)) p.stop();
  for (const f of fakes.splice(0)) await f.close();
});

describe('polling a runtime that answers', () => {
  it('says what it is, its conditions and its sandboxes with the addresses PodSandboxStatus gives, asked once per sandbox', async () => {
    const f = await fake('cri', {
      name: 'containerd',
      version: '1.7.0',
      conditions: [
        { type: 'RuntimeReady', status: true },
        { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
      ],
      sandboxes: [{ id: 'sb1', namespace: 'ns', name: 'web', ip: '10.1.0.4', state: 'ready' }],
    });
    const p = poller({ kind: 'fixed', path: f.socket });
    const s = await p.pollOnce();
    expect(s).toMatchObject({
      endpoint: f.socket,
      reachable: true,
      version: { name: 'containerd', version: '1.7.0', apiVersion: 'v1' },
      problem: null,
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni plugin not initialized' },
      ],
      sandboxes: [{ id: 'sb1', namespace: 'ns', name: 'web', state: 'ready', ip: '10.1.0.4' }],
    });
    expect(s.answeringSinceMs).toBe(s.atMs);
    await p.pollOnce();
    expect(f.state.calls).toMatchObject({ Version: 1, Status: 2, ListPodSandbox: 2, PodSandboxStatus: 1 });
    // A sandbox whose state changed is asked again.
    f.state.sandboxes[0]!.state = 'notready';
    expect((await p.pollOnce()).sandboxes![0]).toMatchObject({ state: 'notready', ip: '10.1.0.4' });
    expect(f.state.calls.PodSandboxStatus).toBe(2);
  });

  it('redacts the secrets of labels and annotations before anyone sees them', async () => {
    const f = await fake('cri', { sandboxes: [{ id: 'sb1', namespace: 'ns', name: 'web', annotations: { 'example.com/api-token': 'hunter2', 'example.com/config': '{"password":"x","mode":"fast"}', plain: 'text' } }] });
    const redactor = createRedactor({ keys: compileKeyPatterns(DEFAULT_REDACT_KEYS), keysExcept: compileKeyPatterns(DEFAULT_REDACT_KEYS_EXCEPT), pointers: [] });
    const s = await poller({ kind: 'fixed', path: f.socket }, { redact: redactor.stringMap }).pollOnce();
    expect(s.sandboxes![0]!.annotations).toEqual({ 'example.com/api-token': '[redacted]', 'example.com/config': '{"password":"[redacted]","mode":"fast"}', plain: 'text' });
  });

  it('tries the usual sockets in order and keeps the first that answers', async () => {
    const notCri = await fake('http1');
    const cri = await fake('cri');
    const p = poller({ kind: 'auto', candidates: ['/nonexistent/containerd.sock', notCri.socket, cri.socket] });
    expect(await p.pollOnce()).toMatchObject({ endpoint: cri.socket, reachable: true });
  });

  it('says no socket was found among the usual ones', async () => {
    const s = await poller({ kind: 'auto', candidates: ['/nonexistent/a.sock', '/nonexistent/b.sock'] }).pollOnce();
    expect(s).toMatchObject({ reachable: false, endpoint: null, problem: { kind: 'absent', message: expect.stringContaining('/nonexistent/a.sock, /nonexistent/b.sock') } });
  });

  it('starts counting again when the runtime stops answering, and asks it afresh when it is back', async () => {
    const f = await fake('cri');
    const p = poller({ kind: 'fixed', path: f.socket });
    const first = await p.pollOnce();
    f.state.failWith = { code: 2, details: 'server is not initialized yet' };
    expect(await p.pollOnce()).toMatchObject({ reachable: false, answeringSinceMs: null, problem: { kind: 'error', message: expect.stringContaining('server is not initialized yet') } });
    f.state.failWith = null;
    const back = await p.pollOnce();
    expect(back.reachable).toBe(true);
    expect(back.answeringSinceMs).toBeGreaterThan(first.answeringSinceMs!);
    expect(f.state.calls.Version).toBe(2);
  });

  it('takes a runtime restarted between two polls for a start: its connection dropped, though every poll answered', async () => {
    const f = await fake('cri');
    const p = poller({ kind: 'fixed', path: f.socket });
    const first = await p.pollOnce();
    expect((await p.pollOnce()).answeringSinceMs).toBe(first.answeringSinceMs);
    await f.restart();
    // The client sees its connection go (the runtime closed it) before the next poll.
    await new Promise((r) => setTimeout(r, 300));
    const after = await p.pollOnce();
    expect(after).toMatchObject({ reachable: true, problem: null });
    expect(after.answeringSinceMs).toBe(after.atMs);
    expect(f.state.calls.Version).toBe(2);
  });

  it('is off with --cri-endpoint none, asking nothing', async () => {
    expect(await poller({ kind: 'off' }).pollOnce()).toMatchObject({ reachable: false, problem: { kind: 'off' } });
  });
});

describe('a runtime that cannot be asked', () => {
  it.each([
    ['hangs', 'hang', 'timeout', /did not answer Version within 0.4 s/],
    ['is no gRPC server', 'http1', 'not-cri', /not as a CRI runtime/],
    ['serves gRPC but not the CRI', 'other-grpc', 'not-cri', /not the CRI's runtime.v1 Version/],
    ['speaks only CRI v1alpha2', 'v1alpha2', 'v1alpha2-only', /speaks only the CRI v1alpha2/],
  ] as const)('that %s is a state with a sentence, within the deadline', async (_name, kind, problem, message) => {
    const f = await fake(kind);
    const started = Date.now();
    const s = await poller({ kind: 'fixed', path: f.socket }).pollOnce();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(s).toMatchObject({ reachable: false, conditions: null, sandboxes: null, problem: { kind: problem, message: expect.stringMatching(message) } });
  });

  it('a socket path with nothing there is absent, said at once', async () => {
    const s = await poller({ kind: 'fixed', path: '/nonexistent/containerd.sock' }).pollOnce();
    expect(s.problem).toEqual({ kind: 'absent', message: expect.stringContaining('No CRI socket at /nonexistent/containerd.sock') });
  });
});
