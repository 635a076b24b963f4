// Collapsing a batch to one event per call must leave the table as replaying every event would.
import { describe, expect, it } from 'vitest';
import type { CniCall, CollectorEvent } from '../../collector/types.js';
import { latestEventPerCall } from '../../store/calls/latest-events.js';

// Only the id and the event type matter here.
const call = (id: string, tag: string) => ({ id, tag }) as unknown as CniCall;
const s = (id: string, tag = id): CollectorEvent => ({ type: 'call.started', call: call(id, tag) });
const f = (id: string, tag = id): CollectorEvent => ({ type: 'call.finished', call: call(id, tag) });
const describeEvents = (events: CollectorEvent[]) => events.map((e) => `${e.type === 'call.started' ? 's' : 'f'}:${(e.call as unknown as { tag: string }).tag}`);

describe('latestEventPerCall', () => {
  it.each<[string, CollectorEvent[], string[]]>([
    ['keeps a lone event', [s('a')], ['s:a']],
    ['keeps different calls in first-seen order', [s('b'), s('a'), f('c')], ['s:b', 's:a', 'f:c']],
    ['lets finished supersede started, in the started slot', [s('a'), s('b'), f('a')], ['f:a', 's:b']],
    ['ignores a started after a finished', [f('a'), s('a', 'late')], ['f:a']],
    ['keeps the first of two starteds, as INSERT OR IGNORE would', [s('a', 'first'), s('a', 'second')], ['s:first']],
    ['keeps the last of two finisheds, as the upsert would', [f('a', 'first'), f('a', 'second')], ['f:second']],
  ])('%s', (_name, events, expected) => {
    expect(describeEvents(latestEventPerCall(events))).toEqual(expected);
  });
});
