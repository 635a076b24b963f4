import { describe, expect, it } from 'vitest';
import { presentGcPlan, presentRuntime } from '../../api/present/runtime.js';
import type { GcPlan, RuntimeView } from '../../store/index.js';
import type { AskedRuntime } from '../../daemon/bundle-runtime.js';
import { gcPlanFromBody, recordedRuntimeView, seenAtBundle } from '../../daemon/bundle-runtime-view.js';

const T = Date.parse('2026-01-01T00:00:00.000Z');
const origin = { atMs: T + 3_600_000, node: 'node-7' };

const record: RuntimeView = {
  endpoint: '/run/containerd/containerd.sock',
  reachable: true,
  version: null,
  conditions: [
    { type: 'RuntimeReady', status: true, reason: '', message: '', sinceMs: T },
    { type: 'NetworkReady', status: true, reason: '', message: '', sinceMs: T },
  ],
  transitions: [{ id: 3, atMs: T, endpoint: '/run/containerd/containerd.sock', type: 'NetworkReady', status: true, reason: '', message: '' }],
  lastCheckedAtMs: null,
  problem: null,
  answeringSinceMs: T,
  leaks: { judging: false, why: 'record', confirmed: 2, suspected: 0, lastJudgedAtMs: null },
};

const asked = (over: Partial<AskedRuntime> = {}): AskedRuntime => ({
  askedAt: new Date(T + 3_599_000).toISOString(),
  endpoint: '/run/containerd/containerd.sock',
  reachable: true,
  name: 'containerd',
  version: '1.7.13',
  apiVersion: 'v1',
  conditions: [
    { type: 'RuntimeReady', status: true, reason: '', message: '' },
    { type: 'NetworkReady', status: true, reason: '', message: '' },
  ],
  sandboxes: [],
  error: null,
  errorKind: null,
  ...over,
});

describe("an opened bundle's runtime view", () => {
  it('is the record alone, marked so, when nothing said how the runtime was when the bundle was taken', () => {
    expect(recordedRuntimeView(record, null, origin)).toEqual({ ...record, recorded: { ...origin, from: 'record' } });
  });

  it('keeps each condition since the record says when the runtime asked by the bundle says the same, and starts a changed one then', () => {
    const same = recordedRuntimeView(record, { from: 'runtime', answer: asked() }, origin);
    expect(same.conditions).toEqual(record.conditions);
    expect(same.transitions).toEqual(record.transitions);
    expect(same).toMatchObject({ reachable: true, lastCheckedAtMs: T + 3_599_000, answeringSinceMs: T, version: { name: 'containerd', version: '1.7.13' }, recorded: { from: 'runtime' } });
    const changed = recordedRuntimeView(
      record,
      { from: 'runtime', answer: asked({ conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }, { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'x' }] }) },
      origin,
    );
    expect(changed.conditions[1]).toEqual({ type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'x', sinceMs: T + 3_599_000 });
    expect(changed.transitions.map((t) => `${t.type}=${t.status}`)).toEqual(['NetworkReady=false', 'NetworkReady=true']);
  });

  it('says why the runtime could not be asked, keeping the conditions the record last had, with a Reachable change', () => {
    const v = recordedRuntimeView(record, { from: 'runtime', answer: asked({ reachable: false, name: null, version: null, conditions: [], error: 'No CRI socket at /x.', errorKind: 'absent' }) }, origin);
    expect(v).toMatchObject({ reachable: false, version: null, problem: { kind: 'absent', message: 'No CRI socket at /x.' }, answeringSinceMs: null, conditions: record.conditions });
    expect(v.transitions[0]).toMatchObject({ type: 'Reachable', status: false, reason: 'absent' });
  });

  it('makes a sandbox still listed seen when the daemon last asked, or when the bundle listed it', () => {
    const sb = { id: 'a', namespace: 'd', name: 'p', uid: 'u', attempt: 0, state: 'ready' as const, createdAtMs: T, labels: {}, annotations: {}, runtimeHandler: '', ip: null, additionalIps: [], firstSeenMs: T, seenAtMs: T, goneAtMs: null };
    expect(seenAtBundle({ from: 'runtime', answer: asked({ sandboxes: [{ id: 'a', namespace: 'd', name: 'p', uid: 'u', attempt: 0, state: 'ready', createdAt: '', labels: {}, annotations: {}, runtimeHandler: '' }] }) })(sb).seenAtMs).toBe(T + 3_599_000);
    expect(seenAtBundle({ from: 'runtime', answer: asked({ sandboxes: [] }) })(sb).seenAtMs).toBe(T);
    expect(seenAtBundle(null)({ ...sb, goneAtMs: T + 1 })).toEqual({ ...sb, goneAtMs: T + 1 });
  });
});

describe("a bundle's GC plan", () => {
  it('reads back as the plan the daemon presented', () => {
    const plan: GcPlan = {
      endpoint: '/run/containerd/containerd.sock',
      reachable: true,
      judging: true,
      why: null,
      judgedAtMs: T,
      suspected: 1,
      items: [
        {
          key: 'c1/podnet/eth0',
          containerId: 'c1',
          network: 'podnet',
          ifName: 'eth0',
          addresses: ['10.22.0.9'],
          pod: { namespace: 'demo', name: 'gone-0' },
          netns: null,
          cachePath: '/var/lib/cni/results/podnet-c1-eth0',
          reservationPaths: ['/var/lib/cni/networks/podnet/10.22.0.9'],
          attachedAtMs: T - 60_000,
          missingSinceMs: T - 5_000,
          freeable: true,
          why: null,
        },
      ],
    };
    const { recorded: _live, ...body } = presentGcPlan(plan);
    const back = gcPlanFromBody(body, origin);
    expect(back).toEqual({ ...plan, recorded: { ...origin, from: 'daemon' } });
    expect(presentGcPlan(back).recorded).toMatchObject({ node: 'node-7', from: 'daemon' });
    expect(presentRuntime(recordedRuntimeView(record, null, origin)).recorded?.note).toBe(
      `As the record of node node-7 last had it (nothing asked the container runtime when the bundle was taken, ${new Date(origin.atMs).toISOString()}): recorded, not live.`,
    );
  });
});
