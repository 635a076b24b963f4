// GET /metrics after some calls: the call counters and histogram follow the
// collector's events, and the daemon's own numbers are read at scrape time.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finished, makeCall, started, startTestApp, TailClient, updated, type TestApp } from './tail-harness.js';

let t: TestApp;

beforeEach(async () => {
  t = await startTestApp();
});

afterEach(async () => {
  await t.close();
});

async function scrape(): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('text/plain');
  return res.body;
}

/** The value of one series, by its exact name and labels as written in the text. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts ended calls by command, plugin and outcome', async () => {
    const ok1 = makeCall({ command: 'ADD', plugin: 'bridge', durationMs: 30 });
    const ok2 = makeCall({ command: 'ADD', plugin: 'bridge', durationMs: 70 });
    const failed = makeCall({ command: 'ADD', plugin: 'host-local', exit: 11 });
    const incomplete = makeCall({ command: 'DEL', plugin: 'bridge', status: 'incomplete', incompleteReason: 'exit not seen', outcome: null });
    t.collector.emit(started(ok1), started(ok2), finished(ok1), finished(ok2), finished(failed), finished(incomplete));

    const text = await scrape();
    expect(valueOf(text, 'cnirec_calls_total{command="ADD",plugin="bridge",network="",outcome="ok"}')).toBe(2);
    expect(valueOf(text, 'cnirec_calls_total{command="ADD",plugin="host-local",network="",outcome="failed"}')).toBe(1);
    expect(valueOf(text, 'cnirec_calls_total{command="DEL",plugin="bridge",network="",outcome="incomplete"}')).toBe(1);
    // Starts are not counted: only ended calls.
    expect(text.match(/^cnirec_calls_total\{/gm)).toHaveLength(3);
  });

  it('counts a call updated after its finish apart, and the call itself once', async () => {
    const call = makeCall({ command: 'ADD', plugin: 'bridge' });
    t.collector.emit(started(call), finished(call));
    t.collector.emit(updated(call));
    const text = await scrape();
    expect(valueOf(text, 'cnirec_calls_total{command="ADD",plugin="bridge",network="",outcome="ok"}')).toBe(1);
    expect(valueOf(text, 'cnirec_calls_updated_total{command="ADD"}')).toBe(1);
  });

  it('counts payloads whose secrets were redacted, by stream', async () => {
    const plain = makeCall();
    const redacted = makeCall();
    const marked = (c: typeof redacted.stdin) => ({ ...c, redactions: ['/password'] });
    t.collector.emit(finished(plain), finished({ ...redacted, stdin: marked(redacted.stdin), stdout: marked(redacted.stdout) }));
    const text = await scrape();
    expect(valueOf(text, 'cnirec_redacted_payloads_total{stream="stdin"}')).toBe(1);
    expect(valueOf(text, 'cnirec_redacted_payloads_total{stream="stdout"}')).toBe(1);
    expect(valueOf(text, 'cnirec_redacted_payloads_total{stream="stderr"}')).toBeUndefined();
  });

  it('puts durations of calls with a known outcome into the histogram, in seconds', async () => {
    const fast = makeCall({ durationMs: 3 });
    const slow = makeCall({ durationMs: 700 });
    const incomplete = makeCall({ status: 'incomplete', outcome: null, durationMs: 5_000 });
    t.collector.emit(finished(fast), finished(slow), finished(incomplete));

    const text = await scrape();
    const series = (suffix: string) => `cnirec_call_duration_seconds_${suffix}`;
    expect(valueOf(text, series('bucket{le="0.005",command="ADD",plugin="bridge",network=""}'))).toBe(1);
    expect(valueOf(text, series('bucket{le="0.5",command="ADD",plugin="bridge",network=""}'))).toBe(1);
    expect(valueOf(text, series('bucket{le="1",command="ADD",plugin="bridge",network=""}'))).toBe(2);
    expect(valueOf(text, series('bucket{le="60",command="ADD",plugin="bridge",network=""}'))).toBe(2);
    expect(valueOf(text, series('count{command="ADD",plugin="bridge",network=""}'))).toBe(2);
    expect(valueOf(text, series('sum{command="ADD",plugin="bridge",network=""}'))).toBeCloseTo(0.703, 6);
  });

  it('labels a command it does not know as "other"', async () => {
    t.collector.emit(finished(makeCall({ command: 'FROBNICATE' })), finished(makeCall({ command: null })));
    const text = await scrape();
    expect(valueOf(text, 'cnirec_calls_total{command="other",plugin="bridge",network="",outcome="ok"}')).toBe(2);
  });

  it('stops adding plugin labels after 64 names, counting the rest as "other"', async () => {
    t.collector.emit(...Array.from({ length: 70 }, (_, i) => finished(makeCall({ plugin: `plugin-${i}` }))));
    const text = await scrape();
    const plugins = new Set([...text.matchAll(/^cnirec_calls_total\{[^}]*plugin="([^"]+)"/gm)].map((m) => m[1]));
    expect(plugins.size).toBe(65);
    expect(valueOf(text, 'cnirec_calls_total{command="ADD",plugin="other",network="",outcome="ok"}')).toBe(6);
  });

  it('labels a program that is no CNI plugin (not in CNI_PATH: `ip netns exec`, `sh -c`) "other", so the label names plugins only', async () => {
    const ip = makeCall({ plugin: 'ip', path: '/usr/sbin/ip' });
    const sh = makeCall({ plugin: 'sh', path: '/bin/sh' });
    t.collector.emit(finished(ip), finished(sh), finished(makeCall({ plugin: 'bridge' })));
    const text = await scrape();
    const plugins = new Set([...text.matchAll(/^cnirec_calls_total\{[^}]*plugin="([^"]+)"/gm)].map((m) => m[1]));
    expect([...plugins].sort()).toEqual(['bridge', 'other']);
  });

  it("has the maintained client's process and Node.js metrics and a build-info metric", async () => {
    const text = await scrape();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(text).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? `, 'm'));
    }
    expect(text).toMatch(/^cnirec_build_info\{version="[^"]+",nodejs="v\d+\.\d+\.\d+"\} 1$/m);
  });

  it('never reports -1 for "not yet"', async () => {
    expect((await scrape()).split('\n').filter((l) => / -1$/.test(l))).toEqual([]);
  });

  it('reports the tracer, store and collector numbers the daemon has now', async () => {
    t.tracer = { ...t.tracer, lostEvents: 7, malformedLines: 2, restarts: 3, running: true, ready: true, reorderWindowMs: 450, arrivalLagMs: 300 };
    t.storeStatus = { ...t.storeStatus, pendingWrites: 4, droppedWrites: 1 };
    t.collectorStats = { ...t.collectorStats, openCalls: 5, oldestRunningStartUs: (Date.now() - 42_000) * 1000 };
    t.store.writeEvents([finished(makeCall())]);

    const text = await scrape();
    expect(valueOf(text, 'cnirec_tracer_lost_events_total')).toBe(7);
    expect(valueOf(text, 'cnirec_tracer_malformed_lines_total')).toBe(2);
    expect(valueOf(text, 'cnirec_tracer_restarts_total')).toBe(3);
    expect(valueOf(text, 'cnirec_tracer_up')).toBe(1);
    expect(valueOf(text, 'cnirec_tracer_reorder_window_seconds')).toBe(0.45);
    expect(valueOf(text, 'cnirec_tracer_arrival_lag_seconds')).toBe(0.3);
    expect(valueOf(text, 'cnirec_store_pending_writes')).toBe(4);
    expect(valueOf(text, 'cnirec_store_dropped_writes_total')).toBe(1);
    expect(valueOf(text, 'cnirec_calls_open')).toBe(5);
    // A plugin running for 42 s: what an alert on a hung plugin watches.
    expect(valueOf(text, 'cnirec_calls_running_oldest_seconds')).toBeGreaterThanOrEqual(42);
    expect(valueOf(text, 'cnirec_calls_running_oldest_seconds')).toBeLessThan(60);
    expect(valueOf(text, 'cnirec_db_size_bytes')).toBe(t.store.databaseSizeBytes());
    expect(valueOf(text, 'cnirec_db_size_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE cnirec_tracer_lost_events_total counter');

    t.tracer = { ...t.tracer, ready: false };
    t.collectorStats = { ...t.collectorStats, oldestRunningStartUs: null };
    const later = await scrape();
    expect(valueOf(later, 'cnirec_tracer_up')).toBe(0);
    expect(valueOf(later, 'cnirec_calls_running_oldest_seconds')).toBe(0);
  });

  it('counts connected tail clients', async () => {
    const a = await TailClient.connect(t.wsBase);
    const b = await TailClient.connect(t.wsBase);
    await a.waitFor((m) => m.type === 'hello');
    await b.waitFor((m) => m.type === 'hello');
    expect(valueOf(await scrape(), 'cnirec_ws_clients')).toBe(2);
    expect(valueOf(await scrape(), 'cnirec_ws_dropped_clients_total')).toBe(0);
    b.close();
    await b.closed;
    await expect.poll(async () => valueOf(await scrape(), 'cnirec_ws_clients')).toBe(1);
    a.close();
  });

  it('keeps each app’s metrics to itself', async () => {
    const other = await startTestApp();
    try {
      t.collector.emit(finished(makeCall()));
      expect(valueOf(await scrape(), 'cnirec_calls_total{command="ADD",plugin="bridge",network="",outcome="ok"}')).toBe(1);
      const res = await other.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.body).not.toContain('cnirec_calls_total{');
    } finally {
      await other.close();
    }
  });
});
