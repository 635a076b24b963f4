// /healthz as the Kubernetes probes use it (deploy/kubernetes): liveness on
// plain /healthz fails only when the daemon does not answer; readiness
// (?probe=readiness) fails while the tracer is not recording, not when the
// store is unwritable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreStatus } from '../../store/index.js';
import type { TracerStatus } from '../../collector/collector.js';
import { startApi, TRACER_STATUS, type ApiHarness, type ErrorBody } from './api-harness.js';

const WRITABLE: StoreStatus = { writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 };
const DISK_FULL: StoreStatus = { writable: false, lastError: 'database or disk is full', failingSince: '2026-01-01T00:00:00.000Z', pendingWrites: 12, droppedWrites: 0, databaseBytes: 0 };

describe('/healthz for liveness and readiness probes', () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApi({ token: 'secret-token' }); // /healthz stays open: kubelet probes send no token
  });
  afterAll(() => h.close());

  const probe = async (url: string) => {
    const res = await h.app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json<{ status: string }>() };
  };

  const cases: Array<{ name: string; tracer: Partial<TracerStatus>; store: StoreStatus; status: string; live: number; ready: number }> = [
    { name: 'recording and writing', tracer: {}, store: WRITABLE, status: 'ok', live: 200, ready: 200 },
    { name: 'recording with the disk full', tracer: {}, store: DISK_FULL, status: 'degraded', live: 200, ready: 200 },
    { name: 'tracer started but not recording yet', tracer: { ready: false }, store: WRITABLE, status: 'degraded', live: 200, ready: 503 },
    { name: 'tracer down (restarting or given up)', tracer: { running: false, ready: false, pid: null, lastError: 'bpftrace exited with code 1' }, store: WRITABLE, status: 'degraded', live: 200, ready: 503 },
  ];

  for (const c of cases) {
    it(`${c.name}: liveness ${c.live}, readiness ${c.ready}, status "${c.status}"`, async () => {
      h.tracer = { ...TRACER_STATUS, ...c.tracer };
      h.storeStatus = c.store;
      const live = await probe('/healthz');
      const liveExplicit = await probe('/healthz?probe=liveness');
      const ready = await probe('/healthz?probe=readiness');
      expect([live.status, liveExplicit.status, ready.status]).toEqual([c.live, c.live, c.ready]);
      for (const r of [live, liveExplicit, ready]) expect(r.body.status).toBe(c.status);
    });
  }

  it('answers 400 naming the parameter for an unknown probe', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz?probe=startup' });
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.issues?.[0]?.path).toBe('probe');
  });
});
