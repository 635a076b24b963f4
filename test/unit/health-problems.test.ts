// /healthz says in sentences why the daemon is degraded: a tracer gap, a database that refuses writes.
import { describe, expect, it } from 'vitest';
import { healthProblems } from '../../api/routes/health.js';
import { runtimeProblems } from '../../api/present/runtime-health.js';
import type { RuntimeProblemKind } from '../../collector/index.js';
import type { RuntimeView } from '../../store/index.js';
import { TRACER_STATUS } from '../integration/api-harness.js';

const STORE = { writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 };

describe('health problems', () => {
  it('are none while the tracer records and the store writes', () => {
    expect(healthProblems(TRACER_STATUS, STORE)).toEqual([]);
  });

  it('name the open tracer gap with its reason', () => {
    const tracer = { ...TRACER_STATUS, running: false, ready: false, lastGap: { startedAt: '2026-01-01T00:00:00.000Z', endedAt: null, reason: 'bpftrace was killed by SIGKILL', incompleteCalls: 1 } };
    expect(healthProblems(tracer, STORE)).toEqual([expect.stringMatching(/not recording since 2026-01-01T00:00:00.000Z \(bpftrace was killed by SIGKILL\); it is being restarted/)]);
  });

  it('name the database error, what is kept and what was dropped', () => {
    const store = { ...STORE, writable: false, lastError: 'Cannot write calls to the database /db because its disk is full; free some space.', failingSince: '2026-01-01T00:00:00.000Z', pendingWrites: 7, droppedWrites: 3 };
    expect(healthProblems(TRACER_STATUS, store)[0]).toMatch(/cannot be written since 2026-01-01T00:00:00.000Z: .*disk is full.* 7 calls are kept in memory .*; 3 were dropped/);
  });
});

describe("the runtime's health problems", () => {
  const view = (kind: RuntimeProblemKind | null): RuntimeView => ({
    endpoint: '/run/containerd/containerd.sock',
    reachable: kind === null,
    version: null,
    conditions: [],
    transitions: [],
    lastCheckedAtMs: 0,
    problem: kind === null ? null : { kind, message: `it is ${kind}.` },
    answeringSinceMs: null,
    leaks: { judging: false, why: null, confirmed: 0, suspected: 0, lastJudgedAtMs: null },
  });
  it.each([
    [null, false],
    ['off', false],
    ['absent', false],
    ['refused', false],
    ['timeout', false],
    ['error', false],
    ['v1alpha2-only', false],
    ['denied', true],
    ['not-cri', true],
  ] as const)('%s makes the daemon degraded: %s (only what cnirec’s own setup causes does)', (kind, degraded) => {
    const problems = runtimeProblems(view(kind));
    expect(problems.length > 0).toBe(degraded);
    if (degraded) expect(problems[0]).toBe(`The container runtime cannot be asked: it is ${kind}. The runtime's readiness and leaked attachments are not followed until this is fixed; calls are still recorded.`);
  });
});
