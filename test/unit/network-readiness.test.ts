// CNI STATUS readiness, the pure parts: what an answer does to a plugin's state and whether its call is
// kept, a network from its plugins, transitions, flapping, the latency histogram, a STATUS error on stdout,
// the network a stdin names and the network a conf lists a plugin type in.
import { describe, expect, it } from 'vitest';
import { applyCheck, isFlapping, networkReadiness, transitionOf } from '../../store/network/heartbeat-rules.js';
import { addLatency, emptyTally, mergeTallies, quantileMs } from '../../store/network/latency.js';
import { cniErrorOf } from '../../store/network/status-answer.js';
import { networksByType } from '../../store/network/conf-networks.js';
import { notReadyMessage } from '../../store/network/not-ready-text.js';
import { networkOfStdin } from '../../store/calls/network-name.js';
import type { PluginReadiness, StatusCheck } from '../../store/network/types.js';

const opts = { slowMs: 3000 };
const T = 1_800_000_000_000;
let n = 0;
const check = (over: Partial<StatusCheck> = {}): StatusCheck => ({
  callId: `call-${n++}`,
  network: 'podnet',
  plugin: 'cilium-cni',
  atMs: T + n * 5000,
  ok: true,
  durationUs: 4_000,
  exitCode: 0,
  signal: null,
  answer: null,
  ...over,
});
const fail = (over: Partial<StatusCheck> = {}) => check({ ok: false, exitCode: 50, ...over });
/** Applies the checks in order; returns each result. */
const run = (checks: StatusCheck[], start: PluginReadiness | null = null) => {
  let state = start;
  return checks.map((c) => {
    const r = applyCheck(state, c, opts);
    state = r.state;
    return r;
  });
};

describe('a STATUS answer', () => {
  it('keeps the first answer, a failure, the first after a change and a slow one; folds healthy ones like the last', () => {
    const results = run([check(), check(), check(), fail(), fail(), check(), check(), check({ durationUs: 3_500_000 }), check()]);
    expect(results.map((r) => r.keep)).toEqual(['first', null, null, 'failing', 'failing', 'changed', null, 'slow', null]);
    const last = results.at(-1)!.state;
    expect(last).toMatchObject({ ready: true, checks: 9, failures: 2, error: null, exitCode: null });
    // The last call kept whole is the slow one.
    expect(last.lastCallId).toBe(results[7]!.state.lastCallId);
    expect(last.latency.buckets.reduce((a, b) => a + b, 0)).toBe(9);
    expect(last.latency.maxUs).toBe(3_500_000);
  });

  it('dates readiness from the change, not from each check', () => {
    const [a, b, c] = run([check({ atMs: T }), check({ atMs: T + 5000 }), fail({ atMs: T + 10_000 })]);
    expect(a!.state.sinceMs).toBe(T);
    expect(b!.state.sinceMs).toBe(T);
    expect(b!.state.lastCheckedMs).toBe(T + 5000);
    expect(c!.state.sinceMs).toBe(T + 10_000);
  });

  it('fills in the error of a failure first seen in light mode from the next answer captured with payloads, and keeps it through later light ones', () => {
    const answer = { code: 50, msg: 'agent not running', details: null };
    const [light, captured, lightAgain] = run([fail({ answer: null }), fail({ answer }), fail({ answer: null })]);
    expect(light!.state.error).toBeNull();
    expect(light!.filledIn).toBe(false);
    expect(captured!.filledIn).toBe(true);
    expect(captured!.state.error).toEqual(answer);
    expect(lightAgain!.filledIn).toBe(false);
    expect(lightAgain!.state.error).toEqual(answer);
    // A new failure after recovery does not inherit the old message.
    const [, again] = run([check(), fail({ answer: null })], lightAgain!.state);
    expect(again!.state.error).toBeNull();
  });
});

describe('a network from its plugins', () => {
  it('is ready when every plugin answered ready, not ready with the first failing one, null when never asked', () => {
    const cilium = run([check()])[0]!.state;
    const portmap = run([fail({ plugin: 'portmap', answer: { code: 51, msg: 'x', details: null } })])[0]!.state;
    expect(networkReadiness('podnet', [], []).ready).toBeNull();
    expect(networkReadiness('podnet', [cilium], [])).toMatchObject({ ready: true, failing: null, checks: 1 });
    const down = networkReadiness('podnet', [portmap, cilium], []);
    expect(down).toMatchObject({ ready: false, checks: 2 });
    expect(down.failing?.plugin).toBe('portmap');
    expect(down.plugins.map((p) => p.plugin)).toEqual(['cilium-cni', 'portmap']);
  });

  it('makes a transition only when the network’s answer changes (the first answer included)', () => {
    const none = networkReadiness('podnet', [], []);
    const c1 = check();
    const up = networkReadiness('podnet', [applyCheck(null, c1, opts).state], []);
    expect(transitionOf(none, up, c1)).toMatchObject({ ready: true, callId: c1.callId, errorCode: null });
    const c2 = check();
    expect(transitionOf(up, networkReadiness('podnet', [applyCheck(up.plugins[0]!, c2, opts).state], []), c2)).toBeNull();
    const c3 = fail({ answer: { code: 50, msg: 'no agent', details: null } });
    const down = networkReadiness('podnet', [applyCheck(up.plugins[0]!, c3, opts).state], []);
    expect(transitionOf(up, down, c3)).toEqual({ network: 'podnet', atMs: c3.atMs, ready: false, plugin: 'cilium-cni', errorCode: 50, errorMsg: 'no agent', callId: c3.callId });
  });

  it('is flapping with more than 4 changes within 10 minutes', () => {
    const at = (mins: number[]) => mins.map((m) => ({ atMs: T + m * 60_000 }));
    expect(isFlapping(at([0, 1, 2, 3]), T + 5 * 60_000)).toBe(false);
    expect(isFlapping(at([0, 1, 2, 3, 4]), T + 5 * 60_000)).toBe(true);
    // The oldest has left the window.
    expect(isFlapping(at([0, 1, 2, 3, 4]), T + 10.5 * 60_000)).toBe(false);
  });

  it('says what fails, with the code in words, since when and how many checks; or that the message is still to come', () => {
    const light = run([check(), fail({ atMs: T + 60_000 })])[1]!.state;
    const n1 = networkReadiness('podnet', [light], [{ id: 1, network: 'podnet', atMs: T + 60_000, ready: false, plugin: 'cilium-cni', errorCode: null, errorMsg: null, callId: light.lastCallId }]);
    expect(notReadyMessage(n1, light, 1)).toBe(
      `Network "podnet" is not ready: plugin cilium-cni answers CNI STATUS with exit 50; its message comes with the next check captured with payloads, since ${new Date(T + 60_000).toISOString()} (1 failing check). ` +
        `The runtime reports the node NotReady while this holds (containerd 2.0.1 and later ask on every CRI Status); see call ${light.lastCallId}.`,
    );
    const captured = applyCheck(light, fail({ answer: { code: 50, msg: 'agent down', details: null } }), opts).state;
    expect(notReadyMessage(n1, captured, 2)).toContain('with error 50 (plugin not available): "agent down", since');
  });
});

describe('STATUS latency as a histogram', () => {
  it('gives p50, p99 as bucket bounds never above the longest, and merges', () => {
    let t = emptyTally();
    for (let i = 0; i < 98; i++) t = addLatency(t, 3_000);
    t = addLatency(t, 40_000);
    t = addLatency(t, 42_000);
    expect(quantileMs(t, 0.5)).toBe(5);
    expect(quantileMs(t, 0.99)).toBe(42);
    expect(quantileMs(emptyTally(), 0.5)).toBeNull();
    const m = mergeTallies([t, addLatency(emptyTally(), 20_000_000)]);
    expect(m.maxUs).toBe(20_000_000);
    expect(m.buckets.at(-1)).toBe(1);
    expect(m.sumUs).toBe(t.sumUs + 20_000_000);
  });
});

describe('what stdin and stdout say', () => {
  it('reads a STATUS error; nothing from empty, non-JSON or unrelated output', () => {
    expect(cniErrorOf(Buffer.from('{"cniVersion":"1.1.0","code":50,"msg":"not ready","details":"socket gone"}'))).toEqual({ code: 50, msg: 'not ready', details: 'socket gone' });
    expect(cniErrorOf(Buffer.from('{"code":51}'))).toEqual({ code: 51, msg: null, details: null });
    expect(cniErrorOf(Buffer.alloc(0))).toBeNull();
    expect(cniErrorOf(Buffer.from('plugin crashed'))).toBeNull();
    expect(cniErrorOf(Buffer.from('{"cniVersion":"1.1.0"}'))).toBeNull();
  });

  it('names the network a config on stdin names', () => {
    expect(networkOfStdin(Buffer.from('{"cniVersion":"1.1.0","name":"podnet","type":"bridge"}'))).toBe('podnet');
    expect(networkOfStdin(Buffer.alloc(0))).toBeNull();
    expect(networkOfStdin(Buffer.from('{"name":""}'))).toBeNull();
    expect(networkOfStdin(Buffer.from('[1,2]'))).toBeNull();
    expect(networkOfStdin(Buffer.from('{"name":'))).toBeNull();
  });

  it('gives a plugin type to the network of the first conf file (by path) listing it', () => {
    const m = networksByType([
      { path: '/etc/cni/net.d/20-other.conflist', network: 'other', types: ['bridge', 'host-local', 'tuning'] },
      { path: '/etc/cni/net.d/10-podnet.conflist', network: 'podnet', types: ['bridge', 'host-local', 'portmap'] },
    ]);
    expect(m.get('bridge')).toBe('podnet');
    expect(m.get('portmap')).toBe('podnet');
    expect(m.get('tuning')).toBe('other');
    expect(m.get('macvlan')).toBeUndefined();
  });
});
