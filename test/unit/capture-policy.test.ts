import { describe, expect, it } from 'vitest';
import { type ObservedCall, callTrigger, decide, expire, initialCaptureState, inCaptureScope, operatorRequest, triggered } from '../../collector/index.js';

const opts = { configured: 'auto' as const, quietMs: 600_000, slowMs: 3000 };
const call = (over: Partial<ObservedCall> = {}): ObservedCall => ({
  command: 'ADD',
  plugin: 'bridge',
  pod: { namespace: 'ns', name: 'web' },
  status: 'finished',
  exitCode: 0,
  signal: null,
  durationUs: 20_000,
  isVersionProbe: false,
  ...over,
});

describe('auto capture: what turns payloads on', () => {
  it('a failing, killed, unfinished or slow call is a trigger; a good one, a VERSION probe are not', () => {
    expect(callTrigger(call(), 3000)).toBeNull();
    expect(callTrigger(call({ exitCode: 1 }), 3000)).toBe('ADD of bridge for ns/web failed (exit 1)');
    expect(callTrigger(call({ exitCode: null, signal: 9 }), 3000)).toBe('ADD of bridge for ns/web was killed by signal 9');
    expect(callTrigger(call({ status: 'incomplete', exitCode: null }), 3000)).toBe('ADD of bridge for ns/web is incomplete');
    expect(callTrigger(call({ durationUs: 3_500_000 }), 3000)).toBe('ADD of bridge for ns/web took 3500 ms');
    expect(callTrigger(call({ exitCode: 1, isVersionProbe: true }), 3000)).toBeNull();
  });

  it('auto is light until a trigger, full for the quiet window after the last one, then light again', () => {
    const t0 = 1_000_000;
    expect(decide(initialCaptureState, t0, opts)).toMatchObject({ setting: 'auto', mode: 'light', untilMs: null });
    let s = triggered(initialCaptureState, 'ADD of bridge failed', t0, opts);
    expect(decide(s, t0 + 1000, opts)).toMatchObject({ mode: 'full', reason: 'auto: ADD of bridge failed', untilMs: t0 + 600_000 });
    // A later trigger extends the window; an earlier deadline never shortens it.
    s = triggered(s, 'DEL loop', t0 + 300_000, opts);
    expect(decide(s, t0 + 700_000, opts)).toMatchObject({ mode: 'full', untilMs: t0 + 900_000 });
    expect(decide(s, t0 + 900_000, opts)).toMatchObject({ mode: 'light', untilMs: null });
    expect(expire(s, t0 + 900_000)).toEqual(initialCaptureState);
  });

  it('an operator’s full for a while wins over auto, then lapses back to the configured setting', () => {
    const t0 = 5_000;
    const s = operatorRequest(initialCaptureState, { setting: 'full', forMs: 1_800_000, scope: { namespace: 'ns', pod: 'web' } }, t0, opts);
    expect(decide(s, t0 + 10, opts)).toMatchObject({ setting: 'full', mode: 'full', untilMs: t0 + 1_800_000, scope: { namespace: 'ns', pod: 'web' }, reason: 'an operator asked for payloads for pod ns/web' });
    expect(decide(s, t0 + 1_800_000, opts)).toMatchObject({ setting: 'auto', mode: 'light', scope: null });
  });

  it('light by an operator stays light whatever fails; `auto` goes back to the policy', () => {
    let s = operatorRequest(initialCaptureState, { setting: 'light', forMs: null, scope: null }, 0, opts);
    s = triggered(s, 'ADD failed', 1, opts);
    expect(decide(s, 2, opts)).toMatchObject({ setting: 'light', mode: 'light', untilMs: null });
    s = operatorRequest(s, { setting: 'auto', forMs: null, scope: null }, 3, opts);
    expect(s.operator).toBeNull();
    expect(decide(s, 4, opts).mode).toBe('full');
  });

  it('configured full or light is what runs without an operator', () => {
    expect(decide(initialCaptureState, 0, { ...opts, configured: 'full' })).toMatchObject({ mode: 'full', reason: 'configured: full' });
    expect(decide(initialCaptureState, 0, { ...opts, configured: 'light' })).toMatchObject({ mode: 'light', reason: 'configured: light' });
  });

  it('a scope keeps the payloads of its pod or namespace only', () => {
    expect(inCaptureScope(null, null)).toBe(true);
    expect(inCaptureScope({ namespace: 'ns', pod: 'web' }, { namespace: 'ns', name: 'web' })).toBe(true);
    expect(inCaptureScope({ namespace: 'ns', pod: 'web' }, { namespace: 'ns', name: 'db' })).toBe(false);
    expect(inCaptureScope({ namespace: 'ns', pod: null }, { namespace: 'ns', name: 'db' })).toBe(true);
    expect(inCaptureScope({ namespace: 'ns', pod: null }, null)).toBe(false);
  });
});
