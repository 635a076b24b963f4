import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { CaptureMode } from '../../bpf/index.js';
import { type CniCall, scopeEvents } from '../../collector/index.js';
import { createCaptureWiring } from '../../daemon/capture-wiring.js';

const log = pino({ level: 'silent' });

function fakeTracer(fail = false) {
  let mode: CaptureMode = 'light';
  const switches: CaptureMode[] = [];
  return {
    switches,
    tracerMode: () => mode,
    setTracerMode: async (m: CaptureMode) => {
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error('bpftrace: cannot attach');
      switches.push(m);
      mode = m;
    },
  };
}

const finished = (over: Partial<CniCall>): CniCall =>
  ({
    id: 'c1',
    command: 'ADD',
    plugin: 'bridge',
    pod: { namespace: 'ns', name: 'web', uid: null, infraContainerId: null },
    status: 'finished',
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    durationUs: 1000,
    isVersionProbe: false,
    captureMode: 'full',
    stdin: { bytes: Buffer.from('{"a":1}'), totalBytes: 7, truncated: false },
    stdout: { bytes: Buffer.from('{}'), totalBytes: 2, truncated: false },
    stderr: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false },
    helpers: [],
    ...over,
  }) as CniCall;

describe('the capture wiring switches the tracer as the policy says', () => {
  it('a failing call turns payloads on at once; the quiet window turns them off', async () => {
    let now = 0;
    const tracer = fakeTracer();
    let loops = 0;
    const w = createCaptureWiring({ policy: { configured: 'auto', quietMs: 60_000, slowMs: 3000 }, ...tracer, openLoops: () => loops, log, now: () => now });
    const seen: string[] = [];
    w.subscribe({ onCaptureChanged: (s) => seen.push(`${s.mode}${s.switching ? '…' : ''}`) });
    expect(w.initialMode()).toBe('light');
    w.callListener.onEvents([{ type: 'call.finished', call: finished({}) }]);
    expect(w.status().mode).toBe('light');
    w.callListener.onEvents([{ type: 'call.finished', call: finished({ outcome: { exitCode: 1, signal: null, coreDumped: false } }) }]);
    expect(w.status()).toMatchObject({ mode: 'full', setting: 'auto', switching: true, reason: 'auto: ADD of bridge for ns/web failed (exit 1)' });
    await new Promise((r) => setTimeout(r, 20));
    expect(tracer.switches).toEqual(['full']);
    expect(w.status().until).toBe(new Date(60_000).toISOString());
    // An open loop holds payloads on past the window.
    loops = 1;
    now = 59_000;
    await w.request({ setting: 'auto', forMs: null, scope: null });
    loops = 0;
    now = 200_000;
    await w.request({ setting: 'auto', forMs: null, scope: null });
    expect(tracer.switches).toEqual(['full', 'light']);
    expect(seen[0]).toBe('full…');
    expect(seen.at(-1)).toBe('light');
  });

  it('a failing STATUS heartbeat turns payloads on; healthy heartbeats after it do not keep them on', async () => {
    let now = 0;
    const tracer = fakeTracer();
    const w = createCaptureWiring({ policy: { configured: 'auto', quietMs: 60_000, slowMs: 3000 }, ...tracer, openLoops: () => 0, log, now: () => now });
    // libcni's STATUS: no container, no pod.
    const heartbeat = (exitCode: number) => ({ type: 'call.finished' as const, call: finished({ command: 'STATUS', plugin: 'cilium-cni', pod: null, containerId: '', outcome: { exitCode, signal: null, coreDumped: false } }) });
    w.callListener.onEvents([heartbeat(0)]);
    expect(w.status().mode).toBe('light');
    w.callListener.onEvents([heartbeat(50)]);
    expect(w.status()).toMatchObject({ mode: 'full', reason: 'auto: STATUS of cilium-cni failed (exit 50)' });
    await new Promise((r) => setTimeout(r, 20));
    // Healthy heartbeats every 5 s after it: the window is not extended, it ends a minute after the failure.
    for (let at = 5_000; at < 60_000; at += 5_000) {
      now = at;
      w.callListener.onEvents([heartbeat(0)]);
    }
    expect(w.status().until).toBe(new Date(60_000).toISOString());
    now = 60_000;
    w.callListener.onEvents([heartbeat(0)]);
    await w.request({ setting: 'auto', forMs: null, scope: null });
    expect(w.status().mode).toBe('light');
    expect(tracer.switches).toEqual(['full', 'light']);
  });

  it('an operator request resolves once the tracer runs its mode; a refused switch is an error and on status', async () => {
    const ok = fakeTracer();
    const w = createCaptureWiring({ policy: { configured: 'auto', quietMs: 60_000, slowMs: 3000 }, ...ok, openLoops: () => 0, log });
    const s = await w.request({ setting: 'full', forMs: 1_800_000, scope: { namespace: 'ns', pod: null } });
    expect(s).toMatchObject({ setting: 'full', configured: 'auto', mode: 'full', switching: false, scope: { namespace: 'ns', pod: null } });
    expect(ok.tracerMode()).toBe('full');

    const bad = fakeTracer(true);
    const w2 = createCaptureWiring({ policy: { configured: 'light', quietMs: 60_000, slowMs: 3000 }, ...bad, openLoops: () => 0, log });
    await expect(w2.request({ setting: 'full', forMs: null, scope: null })).rejects.toThrow('bpftrace: cannot attach');
    expect(w2.status()).toMatchObject({ mode: 'full', lastError: 'bpftrace: cannot attach' });
  });

  it('under a scope, other pods’ calls lose their payloads and read as light', () => {
    const mine = finished({ id: 'a' });
    const other = finished({ id: 'b', pod: { namespace: 'kube-system', name: 'dns', uid: null, infraContainerId: null } });
    const out = scopeEvents(
      [
        { type: 'call.finished', call: mine },
        { type: 'call.finished', call: other },
      ],
      { namespace: 'ns', pod: 'web' },
    );
    expect(out[0]!.call).toBe(mine);
    expect(out[1]!.call).toMatchObject({ id: 'b', captureMode: 'light', stdin: { totalBytes: 0 }, stdout: { totalBytes: 0 } });
    expect(scopeEvents(out, null)).toBe(out);
  });
});
