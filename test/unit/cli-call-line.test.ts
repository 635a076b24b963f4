// One call as `cnirec calls`, `pod` and `tail` print it (no colour: these lines are never written to a TTY here).
import { describe, expect, it } from 'vitest';
import { callHeader, callLine } from '../../cli/format.js';
import { callView, NOW_MS } from './cli-fixture.js';

const plain = (s: string) => s.replace(/[\ue000-\ue00f]/g, '');

describe('a call line', () => {
  it('shows a finished call with its age, outcome, duration, pod and id under a header', () => {
    const del = callView({ command: 'DEL', parentProcess: { pid: 1, comm: 'containerd', exe: null } });
    const opts = { time: 'age', nowMs: NOW_MS } as const;
    expect(plain(callHeader(opts))).toBe('AGE     COMMAND  PLUGIN        OUTCOME      DURATION  POD                       ID                 NOTES');
    expect(plain(callLine(del, opts))).toBe('42s     DEL      bridge        exit 0         40.5ms  shop/cart-0               0hodl3r7540-5a34');
  });

  it('shows the time itself, in UTC with its Z, with -o wide, and the caller and container', () => {
    const line = plain(callLine(callView({ parentProcess: { pid: 1, comm: 'containerd', exe: null } }), { time: 'absolute', wide: true, nowMs: NOW_MS }));
    expect(line).toMatch(/^2026-11-21T18:33:20\.104Z {2}ADD {6}bridge/);
    expect(line).toContain('containerd    c0ffee012345');
  });

  it('names the network of a call about no pod and no container (STATUS, GC), as libcni runs them', () => {
    const status = callView({ command: 'STATUS', plugin: 'cilium-cni', pod: null, containerId: '', network: 'podnet' });
    expect(plain(callLine(status, { time: 'age', nowMs: NOW_MS }))).toContain('STATUS   cilium-cni    exit 0         40.5ms  net podnet ');
    expect(plain(callLine({ ...status, network: null }, { time: 'age', nowMs: NOW_MS }))).toContain('40.5ms  -  ');
  });

  it('shows how long a running call has run so far: a hung plugin stands out', () => {
    const running = callView({ status: 'running', endedAt: null, durationMs: null, exitCode: null, ok: null });
    expect(plain(callLine(running, { time: 'age', nowMs: NOW_MS }))).toContain('running       42.00s+');
  });

  it("puts a failed call's error on its line, and says when it printed none", () => {
    const failed = callView({ exitCode: 1, ok: false, error: 'failed to set bridge addr: could not add IP address to "cni0": permission denied' });
    expect(plain(callLine(failed, { time: 'age', nowMs: NOW_MS }))).toMatch(/exit 1 .* error: failed to set bridge addr: could not add IP address to "cni0": permission denied$/);
    expect(plain(callLine(callView({ exitCode: 2, ok: false }), { time: 'age', nowMs: NOW_MS }))).toMatch(/failed without an error message$/);
    expect(plain(callLine(callView({ exitCode: 50, ok: false, captureMode: 'light' }), { time: 'age', nowMs: NOW_MS }))).toMatch(/failed; its output was not captured \(light capture\)$/);
  });

  it('says why a call is incomplete and marks one the tracer lost records of', () => {
    const incomplete = callView({ status: 'incomplete', ok: null, exitCode: null, incomplete: true, incompleteReason: 'the tracer restarted' });
    expect(plain(callLine(incomplete, { time: 'age', nowMs: NOW_MS }))).toContain('incomplete: the tracer restarted');
    expect(plain(callLine(callView({ lostRecords: true }), { time: 'age', nowMs: NOW_MS }))).toContain('the tracer lost records during this call');
  });

  it('shows a pod name holding escape sequences as text, the columns still aligned', () => {
    const hostile = callView({ pod: { namespace: 'prod', name: 'web\u001b[2J\u001b]0;pwned\u0007', uid: null } });
    const line = plain(callLine(hostile, { time: 'age', nowMs: NOW_MS }));
    // eslint-disable-next-line no-control-regex -- no control character may survive
    expect(line).not.toMatch(/[\u0000-\u001f]/);
    expect(line).toContain('prod/web\\x1b[2J\\x1b]0;pwned\\x07');
  });
});
