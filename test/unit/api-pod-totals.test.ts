// The time a pod spent in each command, and how its calls group into sandboxes.
import { describe, expect, it } from 'vitest';
import { groupBySandbox, totalsByCommand } from '../../api/present/pod-story.js';
import type { CallTree } from '../../api/schemas/pod-story.js';

describe('totals by command', () => {
  it('sums durations per command without floating-point dust', () => {
    const calls = [
      { command: 'ADD', durationMs: 0.1 },
      { command: 'ADD', durationMs: 0.2 },
      { command: 'DEL', durationMs: 12.345 },
    ];
    expect(totalsByCommand(calls)).toEqual({ ADD: 0.3, DEL: 12.345 });
  });

  it('leaves out calls with no duration (still running, end not seen) and calls with no command', () => {
    expect(totalsByCommand([{ command: 'ADD', durationMs: null }, { command: null, durationMs: 5 }, { command: 'CHECK', durationMs: 1 }])).toEqual({ CHECK: 1 });
  });
});

describe('sandboxes', () => {
  const tree = (id: string, containerId: string | null, startedAt: string): CallTree =>
    ({ id, containerId, startedAt, command: 'ADD', durationMs: 1, pod: { namespace: 'demo', name: 'web-0', uid: `uid-${containerId}` }, children: [], helpers: [] }) as unknown as CallTree;

  it('group top-level calls by container id, in order of their first call, keeping call order inside', () => {
    const groups = groupBySandbox([tree('a', 's1', 't1'), tree('b', 's2', 't2'), tree('c', 's1', 't3'), tree('d', null, 't4')]);
    expect(groups.map((g) => [g.containerId, g.startedAt, g.calls.map((c) => c.id), g.podUid])).toEqual([
      ['s1', 't1', ['a', 'c'], 'uid-s1'],
      ['s2', 't2', ['b'], 'uid-s2'],
      [null, 't4', ['d'], 'uid-null'],
    ]);
  });
});
