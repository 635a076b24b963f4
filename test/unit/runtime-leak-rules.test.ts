/** Which attachments the runtime confirms leaked (collector/runtime/leak-rules.ts, attachments.ts): table cases. */

import { describe, expect, it } from 'vitest';
import { judgeLeaks, leakTimingFor, mergeAttachments, type CachedAttachment, type NodeAttachment, type Reservation } from '../../collector/index.js';

const T = 1_800_000_000_000;
const timing = leakTimingFor(1000); // confirm 2 s, grace 3 s, age 12 s

const entry = (id: string, over: Partial<CachedAttachment> = {}): CachedAttachment => ({
  path: `/var/lib/cni/results/net-${id}-eth0`,
  containerId: id,
  network: 'net',
  ifName: 'eth0',
  netns: `/var/run/netns/${id}`,
  ips: ['10.0.0.5'],
  pod: { namespace: 'ns', name: `pod-${id}` },
  writtenAtMs: T - 60_000,
  ...over,
});
const reservation = (id: string, ip: string, over: Partial<Reservation> = {}): Reservation => ({
  path: `/var/lib/cni/networks/net/${ip}`,
  ip,
  network: 'net',
  containerId: id,
  ifName: 'eth0',
  reservedAtMs: T - 60_000,
  ...over,
});

describe('attachments merged from the cache and host-local', () => {
  it('joins a reservation to the cache entry of its container, network and interface, with every address once', () => {
    const [a, ...rest] = mergeAttachments([entry('c1')], [reservation('c1', '10.0.0.5'), reservation('c1', 'fd00::5')]);
    expect(rest).toEqual([]);
    expect(a).toMatchObject({ key: 'c1/net/eth0', addresses: ['10.0.0.5', 'fd00::5'], cachePath: '/var/lib/cni/results/net-c1-eth0', reservationPaths: ['/var/lib/cni/networks/net/10.0.0.5', '/var/lib/cni/networks/net/fd00::5'] });
  });

  it('joins an old host-local file without an interface to its container on that network', () => {
    const list = mergeAttachments([entry('c1')], [reservation('c1', '10.0.0.9', { ifName: null })]);
    expect(list).toHaveLength(1);
    expect(list[0]!.addresses).toEqual(['10.0.0.5', '10.0.0.9']);
  });

  it('keeps a reservation whose cache entry is gone, its pod from what else knows the container', () => {
    const list = mergeAttachments([], [reservation('c2', '10.0.0.7', { reservedAtMs: T - 5000 })], (id) => (id === 'c2' ? { namespace: 'ns', name: 'from-calls' } : null));
    expect(list).toEqual([
      expect.objectContaining({ key: 'c2/net/eth0', cachePath: null, addresses: ['10.0.0.7'], pod: { namespace: 'ns', name: 'from-calls' }, attachedAtMs: T - 5000 }),
    ]);
  });
});

describe('leaks judged from the runtime’s sandbox list', () => {
  const attachments = (...xs: CachedAttachment[]): NodeAttachment[] => mergeAttachments(xs, []);
  const list = (atMs: number, ...ids: string[]) => ({ atMs, ids: new Set(ids) });

  it.each([
    ['a sandbox the runtime lists is live', [entry('c1')], list(T, 'c1'), 'live'],
    ['an attachment whose args name no pod (podman, cnitool) is not the runtime’s to judge', [entry('c1', { pod: null })], list(T), 'not-runtime'],
    ['one made less than the minimum age ago may belong to a sandbox still being made', [entry('c1', { writtenAtMs: T - 5000 })], list(T), 'too-young'],
    ['one missed by a first list is only suspected', [entry('c1')], list(T), 'suspect'],
  ] as const)('%s', (_name, xs, l, verdict) => {
    const j = judgeLeaks(attachments(...xs), l, T - 10_000, new Map(), timing);
    expect(j.judging).toBe(true);
    expect(j.verdicts.map((v) => v.verdict)).toEqual([verdict]);
  });

  it('confirms a leak when a second list, at least confirmAfterMs later, misses it again', () => {
    const xs = attachments(entry('c1'), entry('c2'));
    const first = judgeLeaks(xs, list(T, 'c2'), T - 10_000, new Map(), timing);
    expect(first.verdicts.map((v) => v.verdict)).toEqual(['suspect', 'live']);
    const soon = judgeLeaks(xs, list(T + 1000, 'c2'), T - 10_000, first.suspects, timing);
    expect(soon.verdicts[0]).toMatchObject({ verdict: 'suspect', missingSinceMs: T });
    const later = judgeLeaks(xs, list(T + 2000, 'c2'), T - 10_000, soon.suspects, timing);
    expect(later.verdicts[0]).toMatchObject({ verdict: 'leaked', missingSinceMs: T });
    expect(later.verdicts[1]!.verdict).toBe('live');
  });

  it('forgets a suspicion when the runtime lists the sandbox again', () => {
    const xs = attachments(entry('c1'));
    const first = judgeLeaks(xs, list(T), T - 10_000, new Map(), timing);
    const back = judgeLeaks(xs, list(T + 3000, 'c1'), T - 10_000, first.suspects, timing);
    expect(back.verdicts[0]!.verdict).toBe('live');
    expect(back.suspects.size).toBe(0);
  });

  it('judges nothing while the runtime has answered for less than its start grace, and starts over after', () => {
    const xs = attachments(entry('c1'));
    const starting = judgeLeaks(xs, list(T), T - 1000, new Map([['c1/net/eth0', T - 30_000]]), timing);
    expect(starting).toMatchObject({ judging: false, verdicts: [], why: expect.stringContaining('has answered for 1 s only') });
    expect(starting.suspects.size).toBe(0);
    const after = judgeLeaks(xs, list(T + 2000), T - 1000, starting.suspects, timing);
    expect(after.verdicts[0]!.verdict).toBe('suspect');
  });

  it('judges nothing without a list (the runtime did not answer it)', () => {
    expect(judgeLeaks(attachments(entry('c1')), null, T - 10_000, new Map(), timing)).toMatchObject({ judging: false, why: expect.stringContaining('cannot be asked') });
    expect(judgeLeaks(attachments(entry('c1')), list(T), null, new Map(), timing).judging).toBe(false);
  });

  it('derives its timing from the poll interval', () => {
    expect(leakTimingFor(5000)).toEqual({ confirmAfterMs: 10_000, startGraceMs: 15_000, minAgeMs: 60_000 });
  });
});
