// The time a pod spent in each command, how its calls group into sandboxes, and the story's bytes.
import { describe, expect, it } from 'vitest';
import { encodePodStory } from '../../api/present/fast-json.js';
import { groupBySandbox, totalsByCommand } from '../../api/present/pod-story.js';
import type { CallTree, PodStory } from '../../api/schemas/pod-story.js';

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

describe('the story as bytes', () => {
  const tree = (id: string, containerId: string | null, children: CallTree[] = []): CallTree =>
    ({ id, containerId, startedAt: `t-${id}`, command: 'ADD', durationMs: 1, pod: null, netns: 'ünï "q" \\ 🚀\n', children, helpers: [] }) as unknown as CallTree;

  // The trees come last in each object; otherwise the same bytes as JSON.stringify.
  const same = (story: PodStory) => {
    const bytes = encodePodStory(story);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(story);
    expect(bytes.length).toBe(Buffer.byteLength(JSON.stringify(story)));
  };

  it('is the story’s JSON, though each tree is encoded once for both places it appears', () => {
    const trees = [tree('a', 's1', [tree('a1', 's1')]), tree('b', 's2'), tree('c', 's1')];
    const story: PodStory = {
      pod: { namespace: 'démo', name: 'web-0', uid: null, uids: [] },
      calls: trees,
      sandboxes: groupBySandbox(trees),
      totals: totalsByCommand(trees),
      truncated: false,
    };
    same(story);
  });

  it('keeps fields added to the story and its sandboxes, and empty lists', () => {
    const story = { pod: { namespace: 'n', name: 'p', uid: null, uids: [] }, calls: [], sandboxes: [], totals: {}, truncated: true, extra: { x: 1 } } as PodStory;
    same(story);
    same({ calls: [], sandboxes: [{ calls: [] }, { calls: [] }] } as unknown as PodStory);
  });
});
