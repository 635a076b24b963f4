/**
 * Fault: the main bpftrace killed (SIGKILL) or crashing (SIGSEGV) under the
 * real daemon. It is restarted with backoff; the gap is stored as tracer
 * events and shown on /healthz, /metrics and the live tail; the standby
 * tracer keeps recording execs and exits meanwhile, so the call in flight at
 * the kill is stored once, with its real end, marked lostRecords (its
 * payloads after the kill are missing); calls after the restart are recorded
 * again. (test/e2e/tracer-standby.test.ts drives calls through the restart.)
 *
 * How long the gap lasts is mostly bpftrace compiling and attaching its
 * program (seconds on a busy 2-CPU machine): the test reports it and checks
 * only that the tracer came back, never a timing (see bench/ for speed).
 */

import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { callsOf, echoCall, health, metric, metrics, poll, startSleeper, type Health } from './support/faults.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();

interface GapMessage {
  type: 'tracer.gap';
  gap: { startedAt: string; endedAt: string | null; durationMs: number | null; reason: string; incompleteCalls: number };
}

describe.runIf(canRun)('bpftrace killed or crashing under the daemon', () => {
  let daemon: RunningDaemon;
  let ws: WebSocket;
  const tail: Array<{ type: string; gap?: GapMessage['gap']; call?: { containerId: string | null; status: string } }> = [];

  beforeAll(async () => {
    daemon = await startDaemon();
    ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail`);
    ws.on('message', (data) => tail.push(JSON.parse(data.toString()) as (typeof tail)[number]));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
  });
  afterAll(async () => {
    ws?.close();
    await daemon?.stop();
  });

  /** Kills bpftrace with `signal`; resolves with the time until a new one records, and what /healthz said meanwhile. */
  const killTracer = async (signal: NodeJS.Signals) => {
    // The standby compiles beside the main tracer at start and after its own restarts.
    const before = await poll('the standby tracer to record', async () => {
      const h = await health(daemon.url);
      return h.tracer.ready && h.tracer.standby?.ready ? h : null;
    });
    const killedAt = Date.now();
    process.kill(before.tracer.pid!, signal);
    // The first /healthz seen while no tracer recorded (a holder: TypeScript does not follow assignments in closures).
    const seen: { during: Health | null } = { during: null };
    const after = await poll(
      'a new tracer to record',
      async () => {
        const h = await health(daemon.url);
        if (!h.tracer.ready) seen.during ??= h;
        return h.tracer.ready && h.tracer.pid !== before.tracer.pid ? h : null;
      },
      60_000,
      () => daemon.logs(),
      20,
    );
    return { before, during: seen.during, after, readyAfterMs: Date.now() - killedAt };
  };

  it('restarts a SIGKILLed bpftrace, stores the call in flight once with its real end, and reports the gap everywhere', async () => {
    const containerId = `gap-${Date.now().toString(36)}`;
    const sleeper = startSleeper(containerId, 'gap');
    await poll('the sleeper to be recorded as running', async () => (await callsOf(daemon.url, containerId)).some((c) => c.status === 'running'), 20_000, () => daemon.logs());

    const { during, after, readyAfterMs } = await killTracer('SIGKILL');
    console.info(`bpftrace SIGKILL → new tracer recording after ${readyAfterMs} ms (gap ${after.tracer.gapSeconds.toFixed(2)} s)`);

    // While it was down: degraded, saying why.
    expect(during?.status).toBe('degraded');
    expect(during?.problems.join(' ')).toMatch(/tracer is not recording since .*killed by SIGKILL.*being restarted/);
    // Back: one gap, closed; no call cut short (the standby followed them).
    expect(after.status).toBe('ok');
    expect(after.tracer.restarts).toBe(1);
    expect(after.tracer.gaps).toBe(1);
    expect(after.tracer.lastGap).toMatchObject({ reason: 'bpftrace was killed by SIGKILL', endedAt: expect.any(String) });
    expect(after.tracer.lastGap!.incompleteCalls).toBe(0);
    expect(after.tracer.gapSeconds).toBeGreaterThan(0);

    const m = await metrics(daemon.url);
    expect(metric(m, 'cnirec_tracer_gaps_total')).toBe(1);
    expect(metric(m, 'cnirec_tracer_gap_seconds_total')).toBeGreaterThan(0);
    expect(metric(m, 'cnirec_tracer_restarts_total')).toBe(1);
    expect(metric(m, 'cnirec_tracer_up')).toBe(1);

    // Stored: the gap's start and end as tracer events.
    const events = daemon.store.listTracerEvents(20).map((e) => ({ kind: e.kind, detail: e.detail as Record<string, unknown> }));
    expect(events.filter((e) => e.kind === 'gap-started')).toEqual([
      { kind: 'gap-started', detail: { reason: 'bpftrace was killed by SIGKILL', incompleteCalls: after.tracer.lastGap!.incompleteCalls } },
    ]);
    const restarted = events.filter((e) => e.kind === 'restarted');
    expect(restarted).toHaveLength(1);
    expect(restarted[0]!.detail).toMatchObject({ reason: 'bpftrace was killed by SIGKILL', gapSeconds: expect.any(Number) });

    // The tail: the gap opening, then closing, to a client with no filter.
    const gaps = await poll('both tracer.gap messages', () => {
      const g = tail.filter((t) => t.type === 'tracer.gap');
      return g.length >= 2 ? g : null;
    });
    expect(gaps.map((g) => g.gap!.endedAt === null)).toEqual([true, false]);
    expect(gaps[1]!.gap).toMatchObject({ reason: 'bpftrace was killed by SIGKILL', incompleteCalls: after.tracer.lastGap!.incompleteCalls, durationMs: expect.any(Number) });
    expect(tail.some((t) => t.type === 'call.finished' && t.call?.containerId === containerId)).toBe(false);

    // The call in flight: still running, once; when it ends (SIGKILLed), once, with that end, its lost payloads marked.
    expect((await callsOf(daemon.url, containerId)).map((c) => c.status)).toEqual(['running']);
    await sleeper.stop();
    const [call, ...others] = await poll('the call in flight to end', async () => {
      const c = await callsOf(daemon.url, containerId);
      return c.length > 0 && c[0]!.status !== 'running' ? c : null;
    });
    expect(others).toEqual([]);
    expect(call).toMatchObject({ status: 'finished', lostRecords: true, signal: 9 });
    const probe = `after-${containerId}`;
    expect((await echoCall(probe)).exitCode).toBe(0);
    await poll('a call after the restart to be recorded', async () => (await callsOf(daemon.url, probe)).some((c) => c.status === 'finished'), 20_000, () => daemon.logs());
    expect(await callsOf(daemon.url, containerId)).toEqual([call]);
  });

  it('restarts a crashing bpftrace (SIGSEGV) too, counting a second gap', async () => {
    const { during, after, readyAfterMs } = await killTracer('SIGSEGV');
    console.info(`bpftrace SIGSEGV → new tracer recording after ${readyAfterMs} ms (total gap ${after.tracer.gapSeconds.toFixed(2)} s)`);
    expect(during?.status).toBe('degraded');
    expect(after.tracer.gaps).toBe(2);
    expect(after.tracer.lastGap).toMatchObject({ reason: 'bpftrace was killed by SIGSEGV', endedAt: expect.any(String) });
    const probe = `crash-${Date.now().toString(36)}`;
    expect((await echoCall(probe)).exitCode).toBe(0);
    await poll('a call after the second restart to be recorded', async () => (await callsOf(daemon.url, probe)).some((c) => c.status === 'finished'), 20_000, () => daemon.logs());
  });
});
