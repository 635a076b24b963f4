// The tail's filter: parsing the connect query and `since`, and matching
// live calls exactly as the store's list filter matches stored ones.
import { describe, expect, it } from 'vitest';
import { summaryFromLive, summaryFromStored } from '../../api/present/call-summary.js';
import { matchesFilter, parseSince, tailQueryFrom, tailQuerySchema, toCallFilter, type TailFilter } from '../../api/tail/tail-filter.js';
import { createCallStore, openDatabase } from '../../store/index.js';
import { asRunning, finished, makeCall, started, T0 } from '../integration/tail-harness.js';

describe('parseSince', () => {
  it('reads epoch milliseconds as microseconds', () => {
    expect(parseSince('1763750000123')).toBe(1_763_750_000_123_000);
  });

  it('reads ISO 8601 date-times, with zone or Z, and plain dates', () => {
    expect(parseSince('2025-11-21T18:33:20.123Z')).toBe(Date.parse('2025-11-21T18:33:20.123Z') * 1000);
    expect(parseSince('2025-11-21T19:33:20+01:00')).toBe(Date.parse('2025-11-21T18:33:20Z') * 1000);
    expect(parseSince('2025-11-21')).toBe(Date.parse('2025-11-21') * 1000);
  });

  it('reads a duration as that long before now, as the REST routes do', () => {
    expect(parseSince('5m', 1_763_750_000_000)).toBe((1_763_750_000_000 - 300_000) * 1000);
  });

  it.each(['', 'yesterday', '-1', '1.5', 'March 7, 2025', '2025-13-45T00:00:00Z', '99999999999999999', '1000'])('refuses %j', (text) => {
    expect(parseSince(text)).toBeNull();
  });
});

describe('the connect query', () => {
  it('turns booleans and since into values and leaves out absent fields', () => {
    const parsed = tailQuerySchema.parse({ pod: 'web-0', failed: 'false', includeVersion: 'true', since: '1763750000000' });
    expect(tailQueryFrom(parsed)).toEqual({ filter: { pod: 'web-0', failed: false, includeVersion: true }, sinceUs: 1_763_750_000_000_000 });
    expect(tailQueryFrom(tailQuerySchema.parse({}))).toEqual({ filter: {}, sinceUs: null });
  });

  it('refuses a parameter it does not know (a typo would widen the tail), as the REST routes do', () => {
    const result = tailQuerySchema.safeParse({ namepsace: 'prod', pod: 'a' });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain('namepsace');
  });

  it('takes the commands the REST routes take, and refuses a lower-case one as they do', () => {
    expect(tailQuerySchema.safeParse({ command: 'ADD' }).success).toBe(true);
    expect(tailQuerySchema.safeParse({ command: 'add' }).success).toBe(false);
  });

  it('refuses an empty name, a repeated parameter and a word for a boolean, naming each field', () => {
    const result = tailQuerySchema.safeParse({ namespace: '', pod: ['a', 'b'], failed: 'maybe' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.')).sort()).toEqual(['failed', 'namespace', 'pod']);
  });
});

describe('matchesFilter', () => {
  const call = summaryFromLive(makeCall({ namespace: 'demo', podName: 'web-0', command: 'ADD', plugin: 'bridge', exit: 0 }), null);

  it('lets everything but VERSION probes through an empty filter', () => {
    expect(matchesFilter(call, {})).toBe(true);
    expect(matchesFilter(summaryFromLive(makeCall({ command: 'VERSION' }), null), {})).toBe(false);
  });

  it('lets a VERSION probe through when asked for by includeVersion or by command', () => {
    const probe = summaryFromLive(makeCall({ command: 'VERSION' }), null);
    expect(matchesFilter(probe, { includeVersion: true })).toBe(true);
    expect(matchesFilter(probe, { command: 'VERSION' })).toBe(true);
  });

  it('never matches a running call with failed=true or failed=false: its outcome is unknown', () => {
    const running = summaryFromLive(asRunning(makeCall()), null);
    expect(matchesFilter(running, { failed: true })).toBe(false);
    expect(matchesFilter(running, { failed: false })).toBe(false);
  });

  it('needs a pod for a namespace or pod filter', () => {
    const noPod = { ...call, pod: null };
    expect(matchesFilter(noPod, { namespace: 'demo' })).toBe(false);
    expect(matchesFilter(noPod, { pod: 'web-0' })).toBe(false);
  });
});

describe('a tail filter and the store’s list filter', () => {
  it('agree on every call, for every filter', () => {
    const store = createCallStore(openDatabase(':memory:'));
    try {
      const calls = [
        makeCall({ at: 1, namespace: 'demo', podName: 'web-0', command: 'ADD', plugin: 'bridge' }),
        makeCall({ at: 2, namespace: 'demo', podName: 'web-1', command: 'DEL', plugin: 'bridge', exit: 1 }),
        makeCall({ at: 3, namespace: 'prod', podName: 'web-0', command: 'ADD', plugin: 'host-local' }),
        makeCall({ at: 4, namespace: 'prod', podName: 'db-0', command: 'CHECK', plugin: 'portmap', exit: 2 }),
        makeCall({ at: 5, command: 'VERSION', plugin: 'bridge' }),
        makeCall({ at: 6, status: 'incomplete', outcome: null, incompleteReason: 'exit not seen' }),
        makeCall({ at: 7, namespace: 'demo', podName: 'web-2', command: 'GC', plugin: 'bridge' }),
      ];
      store.writeEvents(calls.map(finished));
      store.writeEvents([started(makeCall({ at: 8, podName: 'web-3' }))]);

      const filters: TailFilter[] = [
        {},
        { namespace: 'demo' },
        { pod: 'web-0' },
        { namespace: 'prod', pod: 'web-0' },
        { command: 'ADD' },
        { command: 'VERSION' },
        { plugin: 'bridge' },
        { failed: true },
        { failed: false },
        { includeVersion: true },
        { failed: false, includeVersion: true },
        { namespace: 'demo', failed: true, plugin: 'bridge' },
      ];
      const all = store.listCalls({ includeVersion: true }, 1_000).items;
      for (const filter of filters) {
        const fromStore = store.listCalls(toCallFilter(filter, T0), 1_000).items.map((c) => c.id);
        const fromTail = all.filter((c) => matchesFilter(summaryFromStored(c, null), filter)).map((c) => c.id);
        expect(fromTail, JSON.stringify(filter)).toEqual(fromStore);
      }
    } finally {
      store.close();
    }
  });
});
