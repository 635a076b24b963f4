// /metrics as the daemon wires it: calls counted as the store keeps them, each with its CNI network
// (the heartbeat sieve names it), STATUS heartbeats counted once each from the sieve's checks whether
// folded or kept, and the pods DEL/ADD loops hold, by name.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../api/deps.js';
import { registerMetrics } from '../../api/routes/metrics.js';
import type { CniCall } from '../../collector/types.js';
import { createFindingsReader, createHeartbeatSieve, type HeartbeatSieve } from '../../store/index.js';
import { callFixtures, COLLECTOR_STATS, finished, STORE_STATUS, stream, tempStore, TRACER_STATUS, type TempStore } from './harness.js';

const T0 = Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000 * 1000;
const { makeCall } = callFixtures(T0, 40_000);
const conf = JSON.stringify({ cniVersion: '1.1.0', name: 'podnet', type: 'bridge' });
const status = (atSec: number, exit = 0): CniCall =>
  makeCall({ at: atSec * 1_000_000, command: 'STATUS', plugin: 'bridge', containerId: '', noPod: true, durationMs: 4, netns: '', ifname: '', stdin: stream(conf), stdout: stream(), exit });

let t: TempStore;
let sieve: HeartbeatSieve;
let app: FastifyInstance;

beforeEach(async () => {
  t = tempStore('cnirec-metrics-net-');
  sieve = createHeartbeatSieve(t.db, { slowMs: 3000, onError: (err) => expect.fail(String(err)) });
  const deps: ApiDeps = {
    tracerStatus: () => TRACER_STATUS,
    collectorStats: () => COLLECTOR_STATS,
    storeStatus: () => STORE_STATUS,
    store: t.store,
    subscribe: () => () => undefined,
    subscribeStored: (l) => sieve.subscribe(l),
    readiness: { networks: () => sieve.networks(), subscribe: (l) => sieve.subscribeReadiness(l) },
    findings: createFindingsReader(t.db),
  };
  app = Fastify();
  registerMetrics(app, deps);
  await app.ready();
});

afterEach(async () => {
  await app.close();
  t.remove();
});

const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
const valueOf = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('call metrics by network', () => {
  it('labels each call with the network the store names it by', async () => {
    sieve.onEvents([finished(makeCall({ command: 'ADD', plugin: 'bridge', exit: 1, stdin: stream(JSON.stringify({ cniVersion: '1.0.0', name: 'podnet', type: 'bridge' })) }))]);
    sieve.onEvents([finished(makeCall({ command: 'DEL', plugin: 'bridge', stdin: stream() }))]);
    const text = await scrape();
    expect(valueOf(text, 'cnirec_calls_total{command="ADD",plugin="bridge",network="podnet",outcome="failed"}')).toBe(1);
    expect(text).toMatch(/^cnirec_calls_total\{command="DEL",plugin="bridge",network="[^"]*",outcome="ok"\} 1$/m);
    expect(valueOf(text, 'cnirec_call_duration_seconds_count{command="ADD",plugin="bridge",network="podnet"}')).toBe(1);
  });

  it('counts each STATUS heartbeat once, folded into readiness or kept as a call', async () => {
    // The first answer is kept as a call, the next two healthy ones folded, the failing one kept.
    for (const [i, exit] of [0, 0, 0, 50].entries()) sieve.onEvents([finished(status(i * 5, exit))]);
    const text = await scrape();
    expect(valueOf(text, 'cnirec_calls_total{command="STATUS",plugin="bridge",network="podnet",outcome="ok"}')).toBe(3);
    expect(valueOf(text, 'cnirec_calls_total{command="STATUS",plugin="bridge",network="podnet",outcome="failed"}')).toBe(1);
    expect(valueOf(text, 'cnirec_cni_network_ready{network="podnet"}')).toBe(0);
  });
});

describe('loop metrics', () => {
  it('names the pods an open DEL or ADD loop holds, with its failures, and forgets a resolved one', async () => {
    const insert = t.db.prepare(
      "INSERT INTO cache_findings (kind, subject, message, container_id, pod_namespace, pod_name, count, first_seen_ms, last_seen_ms, resolved_at_ms) VALUES (?, ?, 'm', ?, ?, ?, ?, 1, 2, ?)",
    );
    insert.run('add-loop', 'a', 'c1', 'demo', 'web-0', 5, null);
    insert.run('del-loop', 'b', 'c2', 'demo', 'old-1', 12, null);
    insert.run('add-loop', 'c', 'c3', 'demo', 'fixed-2', 4, 3);
    const text = await scrape();
    expect(valueOf(text, 'cnirec_open_loop_failures{kind="add-loop",namespace="demo",pod="web-0"}')).toBe(5);
    expect(valueOf(text, 'cnirec_open_loop_failures{kind="del-loop",namespace="demo",pod="old-1"}')).toBe(12);
    expect(text).not.toContain('fixed-2');
  });
});
