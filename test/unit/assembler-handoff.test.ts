/**
 * A capture-mode switch hands the calls in flight to the old tracer run: the
 * new run's assembler is told which processes are "foreign" and leaves them,
 * and everything they start, alone.
 */

import { describe, expect, it } from 'vitest';
import { execLines } from '../support/tracer-lines.js';
import { replay } from '../support/replay.js';

const plugin = (pid: number, ppid: number, ts: number, command = 'ADD') =>
  execLines({ ts, pid, ppid, start: ts - 1000, path: '/opt/cni/bin/bridge', env: { CNI_COMMAND: command, CNI_PATH: '/opt/cni/bin', CNI_CONTAINERID: `c${pid}` } });
const helper = (pid: number, ppid: number, ts: number) =>
  execLines({ ts, pid, ppid, start: ts - 1000, path: '/usr/bin/jq', argv: ['jq', '.'], env: { CNI_COMMAND: 'ADD', CNI_PATH: '/opt/cni/bin' } });
const exit = (pid: number, ts: number, start: number) => `Q ${ts} ${pid} ${start} 0 0 4`;

describe('handing calls over between tracer runs', () => {
  it('ignores a foreign process, its helpers and its forks, and still records new calls', () => {
    const r = replay(
      [
        ...helper(501, 100, 2_000_000),
        `F 2100000 100 502`,
        ...helper(503, 502, 2_200_000),
        ...plugin(600, 1, 3_000_000),
        exit(600, 3_500_000, 2_999_000),
      ],
      { foreignPids: [100] },
    );
    expect(r.started.map((c) => c.pid)).toEqual([600]);
    expect(r.finished.map((c) => c.pid)).toEqual([600]);
    expect(r.assembler.counters.orphanChunks).toBe(0);
    expect(r.assembler.livePids()).not.toContain(501);
  });

  it('turns new top-level calls away once closed to them, and keeps following the calls it has', () => {
    const r = replay([...plugin(700, 1, 1_000_000)], { end: 'none' });
    r.assembler.closeToNewCalls();
    r.feed([...plugin(800, 1, 2_000_000), ...helper(701, 700, 2_100_000), exit(700, 3_000_000, 999_000)]);
    r.tick(Number.MAX_SAFE_INTEGER);
    expect(r.started.map((c) => c.pid)).toEqual([700]);
    const done = r.finished.find((c) => c.pid === 700)!;
    expect(done.status).toBe('finished');
    expect(done.helpers.map((h) => h.path)).toEqual(['/usr/bin/jq']);
  });

  it('lets a run decline top-level calls whose parent another run follows', () => {
    const r = replay([...plugin(900, 42, 1_000_000), ...plugin(901, 43, 1_100_000)], { admitTopLevel: (ppid) => ppid !== 42 });
    expect(r.started.map((c) => c.pid)).toEqual([901]);
  });
});
