/**
 * Retention benchmark: a database with a small size limit, written to
 * continuously (a flood of bridge ADDs with their delegated host-local ADDs,
 * ~2.5 KiB of payload each, at a fixed rate) while the retention worker runs
 * as the daemon runs it. Reports how long writes stalled (the longest store
 * write transaction of each kind, how late ingest batches ran, the event
 * loop's delay) and the database size against the limit over time and at
 * the end.
 *
 *   npm run build && flock /tmp/cnirec-bench.lock node dist/bench/retention.js \
 *     [--limit-mib 32] [--seconds 60] [--calls-per-second 800] [--interval-ms 0 (daemon default)] [--baseline-seconds 20]
 *
 * Writes bench/results/retention.json and bench/results/retention.md.
 */

import { mkdirSync, mkdtempSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CapturedStream, CniCall, CollectorEvent } from '../collector/types.js';
import { createCallStore, createRetentionWorker, openDatabase, writeTimingFor, type RetentionRun, type WriteKind } from '../store/index.js';

const { values: args } = parseArgs({
  options: {
    'limit-mib': { type: 'string', default: '32' },
    seconds: { type: 'string', default: '60' },
    'calls-per-second': { type: 'string', default: '800' },
    'interval-ms': { type: 'string', default: '0' },
    'baseline-seconds': { type: 'string', default: '20' },
    out: { type: 'string', default: path.resolve(import.meta.dirname, '../../bench/results') },
  },
});
const LIMIT_BYTES = Number(args['limit-mib']) * 1024 * 1024;
const SECONDS = Number(args.seconds);
const CALLS_PER_SECOND = Number(args['calls-per-second']);
/** 0: the daemon's default. */
const INTERVAL_MS = Number(args['interval-ms']);
const BASELINE_SECONDS = Number(args['baseline-seconds']);
/** The collector hands the store a batch every few ms under load; 10 ms ticks model that. */
const TICK_MS = 10;
const STDIN_BYTES = 1500;
const STDOUT_BYTES = 1000;

const stream = (n: number, fill: number): CapturedStream => {
  const bytes = Buffer.alloc(n, fill);
  return { bytes, totalBytes: n, truncated: false };
};

let pid = 100_000;
function call(startedAtUs: number, plugin: string, parentId: string | null): CniCall {
  pid++;
  return {
    id: `${Math.floor(startedAtUs).toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(startedAtUs * 1000),
    ppid: parentId ? pid - 1 : 4242,
    parentId,
    parentProcess: { pid: 4242, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: `/opt/cni/bin/${plugin}`,
    plugin,
    argv: [`/opt/cni/bin/${plugin}`],
    env: { CNI_COMMAND: 'ADD', CNI_ARGS: `K8S_POD_NAMESPACE=flood;K8S_POD_NAME=pod-${pid % 500}` },
    command: 'ADD',
    containerId: `sandbox-${pid}`,
    netns: '/var/run/netns/cni-1',
    ifname: 'eth0',
    cniArgs: `K8S_POD_NAMESPACE=flood;K8S_POD_NAME=pod-${pid % 500}`,
    pod: { namespace: 'flood', name: `pod-${pid % 500}`, uid: null, infraContainerId: null },
    traceParent: null,
    isVersionProbe: false,
    startedAtUs,
    endedAtUs: startedAtUs + 5_000,
    durationUs: 5_000,
    outcome: { exitCode: 0, signal: null, coreDumped: false },
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    lostRecordsCause: null,
    stdioShared: false,
    uncapturedIo: 0,
    stdin: stream(STDIN_BYTES, 0x7b),
    stdout: stream(STDOUT_BYTES, 0x7d),
    stderr: stream(0, 0),
    helpers: [],
  };
}

const percentile = (sorted: readonly number[], p: number) => (sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0));
const ms = (s: number) => Math.round(s * 1e6) / 1e3;
const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;

interface Phase {
  written: number;
  keptAtEnd: number;
  runs: RetentionRun[];
  settle: RetentionRun | null;
  durations: Map<WriteKind, number[]>;
  lateness: number[];
  loopP99Ms: number;
  loopMaxMs: number;
  longestWrite: { seconds: number; kind: WriteKind | null };
  samples: { t: number; diskBytes: number; usedBytes: number }[];
  finalDiskBytes: number;
  finalUsedBytes: number;
  integrity: unknown;
}

/** Fixed-rate ingest for `seconds` into a fresh database, with the retention worker as the daemon runs it or without. */
async function ingestPhase(withRetention: boolean, seconds: number): Promise<Phase> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-retention-'));
  const file = path.join(dir, 'cnirec.db');
  const diskBytes = () => statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
  const db = openDatabase(file);
  const store = createCallStore(db);
  const timing = writeTimingFor(db);
  const durations = new Map<WriteKind, number[]>();
  timing.observe((kind, s) => {
    const list = durations.get(kind) ?? [];
    list.push(s);
    durations.set(kind, list);
  });
  const runs: RetentionRun[] = [];
  const limits = { maxAgeMs: 0, maxDbBytes: withRetention ? LIMIT_BYTES : 0 };
  const worker = createRetentionWorker(db, { ...limits, ...(INTERVAL_MS > 0 ? { intervalMs: INTERVAL_MS } : {}), onRun: (r) => runs.push(r) });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const samples: Phase['samples'] = [];
  const lateness: number[] = [];
  let written = 0;
  const start = performance.now();
  loop.enable();
  worker.start();
  // Every tick writes the calls due since the last one, as the collector hands over
  // what it read; how late a tick runs is how long ingest waited for the event loop.
  await new Promise<void>((resolve) => {
    let tick = 0;
    let lastSample = 0;
    const next = () => {
      tick++;
      const due = start + tick * TICK_MS;
      setTimeout(() => {
        const now = performance.now();
        lateness.push(now - due);
        const target = Math.floor(((now - start) / 1000) * CALLS_PER_SECOND);
        const events: CollectorEvent[] = [];
        while (written < target) {
          const root = call(Date.now() * 1000, 'bridge', null);
          const child = call(root.startedAtUs + 100, 'host-local', root.id);
          events.push({ type: 'call.finished', call: root }, { type: 'call.finished', call: child });
          written += 2;
        }
        store.writeEvents(events);
        if (now - lastSample >= 250) {
          lastSample = now;
          samples.push({ t: (now - start) / 1000, diskBytes: diskBytes(), usedBytes: worker.status().size.usedBytes });
        }
        if (now - start >= seconds * 1000) resolve();
        else next();
      }, Math.max(0, due - performance.now()));
    };
    next();
  });
  loop.disable();
  await worker.stop();
  // Writing has stopped: one more run, as the next interval would do, for the settled size.
  const settleWorker = createRetentionWorker(db, limits);
  const settle = await settleWorker.runOnce();
  const phase: Phase = {
    written,
    keptAtEnd: store.countCalls(),
    runs,
    settle,
    durations,
    lateness,
    loopP99Ms: loop.percentile(99) / 1e6,
    loopMaxMs: loop.max / 1e6,
    longestWrite: { seconds: timing.stats().maxSeconds, kind: timing.stats().maxKind },
    samples,
    finalDiskBytes: diskBytes(),
    finalUsedBytes: settleWorker.status().size.usedBytes,
    integrity: db.pragma('integrity_check', { simple: true }),
  };
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return phase;
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

function stallsOf(p: Phase) {
  const late = [...p.lateness].sort((a, b) => a - b);
  return {
    longestWriteMs: ms(p.longestWrite.seconds),
    longestWriteKind: p.longestWrite.kind,
    writesByKind: Object.fromEntries(
      [...p.durations.entries()].map(([kind, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return [kind, { count: list.length, p50Ms: ms(percentile(sorted, 0.5)), p99Ms: ms(percentile(sorted, 0.99)), maxMs: ms(sorted.at(-1) ?? 0) }];
      }),
    ),
    ingestTickLatenessMs: { p50: round(percentile(late, 0.5)), p99: round(percentile(late, 0.99)), max: round(late.at(-1) ?? 0) },
    eventLoopDelayMs: { p99: round(p.loopP99Ms, 2), max: round(p.loopMaxMs, 2) },
  };
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  // Same ingest without retention first: what this machine's stalls are anyway (WAL checkpoints, other load).
  const baseline = await ingestPhase(false, BASELINE_SECONDS);
  const p = await ingestPhase(true, SECONDS);
  const runs = p.runs;
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadavgBefore: loadBefore, loadavgAfter: loadavg() },
    params: { limitBytes: LIMIT_BYTES, seconds: SECONDS, baselineSeconds: BASELINE_SECONDS, callsPerSecond: CALLS_PER_SECOND, intervalMs: INTERVAL_MS || 'default', tickMs: TICK_MS, payloadBytesPerCall: STDIN_BYTES + STDOUT_BYTES },
    calls: { written: p.written, keptAtEnd: p.keptAtEnd, deleted: runs.reduce((n, r) => n + r.deleted.calls, 0) + (p.settle?.deleted.calls ?? 0) },
    retention: {
      runs: runs.length,
      sizeRuns: runs.filter((r) => r.bySize).length,
      overLimitRuns: runs.filter((r) => r.overLimit).length,
      longestRunMs: Math.round(Math.max(0, ...runs.map((r) => r.durationMs))),
      longestStepMs: round(Math.max(0, ...runs.map((r) => r.longestStepMs)), 3),
      stepsPerRunMedian: percentile(runs.map((r) => r.steps).sort((a, b) => a - b), 0.5),
    },
    stalls: stallsOf(p),
    baselineStalls: stallsOf(baseline),
    size: {
      limitBytes: LIMIT_BYTES,
      peakDiskBytes: Math.max(0, ...p.samples.map((s) => s.diskBytes)),
      peakUsedBytes: Math.max(0, ...p.samples.map((s) => s.usedBytes)),
      samplesOverLimit: p.samples.filter((s) => s.diskBytes > LIMIT_BYTES).length,
      samples: p.samples.length,
      finalDiskBytes: p.finalDiskBytes,
      finalUsedBytes: p.finalUsedBytes,
      finalUnderLimit: p.finalDiskBytes <= LIMIT_BYTES,
      baselineFinalDiskBytes: baseline.finalDiskBytes,
    },
    integrityCheck: p.integrity,
    sizeTimeline: p.samples.filter((_, i) => i % 4 === 0).map((s) => ({ t: Math.round(s.t), diskMiB: mib(s.diskBytes) })),
  };

  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, 'retention.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(args.out, 'retention.md'), markdown(result));
  process.stdout.write(markdown(result));
}

type Stalls = ReturnType<typeof stallsOf>;

function markdown(r: {
  date: string;
  machine: { cpus: number; cpuModel: string; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  params: { limitBytes: number; seconds: number; baselineSeconds: number; callsPerSecond: number; intervalMs: number | string; payloadBytesPerCall: number };
  calls: { written: number; keptAtEnd: number; deleted: number };
  retention: { runs: number; sizeRuns: number; overLimitRuns: number; longestRunMs: number; longestStepMs: number };
  stalls: Stalls;
  baselineStalls: Stalls;
  size: { limitBytes: number; peakDiskBytes: number; samplesOverLimit: number; samples: number; finalDiskBytes: number; finalUnderLimit: boolean; baselineFinalDiskBytes: number };
  integrityCheck: unknown;
}): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const kinds = (st: Stalls) =>
    Object.entries(st.writesByKind)
      .map(([k, v]) => `| ${k} | ${v.count} | ${v.p50Ms} | ${v.p99Ms} | ${v.maxMs} |`)
      .join('\n');
  const b = r.baselineStalls;
  return `# Retention benchmark

${r.date}, ${r.machine.cpus} × ${r.machine.cpuModel}, Node ${r.machine.node}. Load average (1/5/15 min) before ${load(r.machine.loadavgBefore)}, after ${load(r.machine.loadavgAfter)}.

Ingest: ${r.params.callsPerSecond} calls/s (bridge ADD + delegated host-local ADD, ${r.params.payloadBytesPerCall} B of payload each) for ${r.params.seconds} s,
written in 10 ms batches, against a size limit of ${mib(r.params.limitBytes)} MiB (no age limit); retention interval ${r.params.intervalMs} (size checked every second).
Baseline: the same ingest for ${r.params.baselineSeconds} s into a fresh database without retention, in the same run.

| | with retention | baseline (no retention) |
|---|---|---|
| calls written / deleted / kept at the end | ${r.calls.written} / ${r.calls.deleted} / ${r.calls.keptAtEnd} | |
| retention runs (deleting for size) | ${r.retention.runs} (${r.retention.sizeRuns}) | |
| **longest store write (stall)** | **${r.stalls.longestWriteMs} ms** (${r.stalls.longestWriteKind}) | ${b.longestWriteMs} ms (${b.longestWriteKind}) |
| longest retention step / run | ${r.retention.longestStepMs} ms / ${r.retention.longestRunMs} ms | |
| ingest batch lateness p50 / p99 / max | ${r.stalls.ingestTickLatenessMs.p50} / ${r.stalls.ingestTickLatenessMs.p99} / ${r.stalls.ingestTickLatenessMs.max} ms | ${b.ingestTickLatenessMs.p50} / ${b.ingestTickLatenessMs.p99} / ${b.ingestTickLatenessMs.max} ms |
| event loop delay p99 / max | ${r.stalls.eventLoopDelayMs.p99} / ${r.stalls.eventLoopDelayMs.max} ms | ${b.eventLoopDelayMs.p99} / ${b.eventLoopDelayMs.max} ms |
| peak size on disk (file + WAL) | ${mib(r.size.peakDiskBytes)} MiB (${r.size.samplesOverLimit} of ${r.size.samples} samples over the limit) | |
| **final size on disk vs limit** | **${mib(r.size.finalDiskBytes)} MiB / ${mib(r.size.limitBytes)} MiB** (${r.size.finalUnderLimit ? 'under' : 'OVER'}) | ${mib(r.size.baselineFinalDiskBytes)} MiB |
| integrity_check | ${String(r.integrityCheck)} | |

Store write transactions by kind (ms), with retention:

| kind | count | p50 | p99 | max |
|---|---|---|---|---|
${kinds(r.stalls)}

Baseline:

| kind | count | p50 | p99 | max |
|---|---|---|---|---|
${kinds(b)}

Past 95% of the limit a run deletes down to 85% of it (minus the WAL's budget, limit/16 between 1 and 16 MiB);
between two runs the database grows by what ingest writes until the next size check (1 s), so at flood
rates the file on disk briefly exceeds the limit by about that much.
`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
