// One call as `cnirec calls` prints it (no colour: stdout is not a TTY here).
import { describe, expect, it } from 'vitest';
import { callLine } from '../../cli/format.js';
import { callView } from './cli-fixture.js';

describe('a call line', () => {
  it('shows a finished call with its outcome and duration', () => {
    const del = callView({ id: '0hodl3r7540-5a34', command: 'DEL', parentProcess: { pid: 1, comm: 'containerd' } });
    expect(callLine(del)).toBe('2026-11-21 18:33:20.104  DEL      bridge        exit 0         40.5ms  shop/cart-0  0hodl3r7540-5a34 by containerd');
  });

  it('shows how long a running call has run so far: a hung plugin stands out', () => {
    const running = callView({ status: 'running', endedAt: null, durationMs: null, exitCode: null, ok: null });
    expect(callLine(running, '', { nowMs: Date.parse('2026-11-21T18:34:02.604Z') })).toContain('running       42.50s+');
  });
});
