/**
 * API latency benchmark: how fast the daemon's REST API answers over a
 * week of a busy node's calls, how soon a live call reaches a websocket
 * tail, and how much memory the daemon needs while it serves.
 *
 *   npm run build && node dist/bench/api-latency.js     (as root: it runs the real daemon with bpftrace)
 *
 * About 4 minutes on 2 CPUs once the data set is cached, plus ~4 the
 * first time to populate it.
 *
 * 1. Data set: 1,000,000 calls (3,000 replicas in 50 namespaces, a Deployment's
 *    new pod a new name, a StatefulSet's the same; bridge and its
 *    delegated host-local for every ADD and DEL, VERSION probes, ~2%
 *    failures, ~600 B configs, ~400 B results, 5-500 ms, a week of starts;
 *    see api-latency-data.ts) written through the store's `writeEvents` in
 *    transactions of 2,000 events. The file is cached in --cache-dir under a
 *    name that changes with the generator and the schema version; each run
 *    works on a private copy.
 * 2. The real daemon, `cnirec run --db <copy> --listen 127.0.0.1:0` (full
 *    capture, bpftrace attached), ready when /healthz says the tracer is.
 *    REST scenarios, each at concurrency 1 and 8 with a closed-loop client
 *    (http-reader.ts: one kept-alive connection per worker) on loopback (--requests timed requests after --warmup untimed,
 *    each run capped at --max-seconds-per-run):
 *    GET /api/v1/pods/:ns/:name (random pods, and the StatefulSet names
 *    recreated all week, whole or one pod of them), /api/v1/calls filtered by
 *    namespace+pod (both kinds), command=ADD&failed=true, plugin=bridge&minDurationMs=200,
 *    since=<a day before the data's end>&limit=100, paging 5 pages deep with
 *    the cursor, and GET /api/v1/calls/:id; /healthz as the HTTP floor.
 *    Target p99 ≤ 10 ms. A route that answers 404 is reported as not measured.
 * 3. Diagnostics: the same queries against the store in this process
 *    (read-only connection, no HTTP), with and without JSON, and SQLite's
 *    query plans: what dominates when a target is missed.
 * 4. exec → websocket: a tail client on /api/v1/tail?namespace=bench-live,
 *    /usr/lib/cni/host-local ADD exec'd --live-execs times, each timed from
 *    just before spawn to its call.started and call.finished messages.
 *    Target p99 ≤ 100 ms for call.started.
 *    Then again (--busy-execs, default 20) while host-local VERSION probes
 *    are exec'd in the background --busy-interval-ms (20) apart: other CNI
 *    activity on the node, which keeps the tracer's stream from going quiet.
 * 5. Daemon memory: VmRSS/VmHWM from /proc/<pid>/status after startup,
 *    after the REST scenarios and after the live part. Target ≤ 200 MiB.
 *
 * Options: --calls N (1000000), --requests N (2000), --warmup N (100),
 * --max-seconds-per-run N (30), --live-execs N (200), --busy-execs N (20;
 * 0 skips), --busy-interval-ms N
 * (20), --store-iterations N (300), --cache-dir DIR
 * (/tmp/cnirec-bench-api-latency), --rebuild (populate again), --out DIR
 * (bench/results), --live-only (step 4 alone, the daemon on an empty store:
 * no data set, no REST scenarios, no diagnostics).
 *
 * Writes bench/results/api-latency.json (machine, options, every raw
 * latency, percentiles, plans, memory) and bench/results/api-latency.md
 * (a table per target, met or not met); with --live-only,
 * bench/results/api-latency-live.{json,md} instead.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { DEFAULT_PAGE_SIZE } from '../api/schemas/call-query.js';
import { settings } from '../daemon/config.js';
import { copyDataset, DATASET_CALLS, ensureDataset, seededRandom, type PodName } from './api-latency-data.js';
import { HEALTHZ_SCENARIO, RouteMissingError, runLoad, scenarios as restScenarios, type LoadResult, type PodIncarnation, type Scenario, type ScenarioContext } from './api-latency-http.js';
import { measureLive, PLUGIN, type LiveResult } from './api-latency-live.js';
import { liveOnlyMarkdown, liveVerdict, markdown, verdicts, type LiveOnlyReport, type Machine, type MemoryReadings, type Report, type ScenarioInfo, TARGETS } from './api-latency-report.js';
import { cpuWindow, createQuietGate, procMemory, round } from './lib/stats.js';
import { diagnoseStore } from './api-latency-store.js';
import { startBenchDaemon, type BenchDaemon } from './lib/daemon-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const COMMAND = 'node dist/bench/api-latency.js';
const CONCURRENCIES = [1, 8] as const;
/** Time cap of each diagnostic step (a pod story holds ~300 calls on the full data set). */
const STORE_STEP_SECONDS = 5;

interface Options {
  calls: number;
  requests: number;
  warmup: number;
  maxSecondsPerRun: number;
  liveExecs: number;
  busyExecs: number;
  busyIntervalMs: number;
  storeIterations: number;
  cacheDir: string;
  rebuild: boolean;
  out: string;
  /** Only the exec → websocket part, on an empty store: no data set, no REST scenarios, no diagnostics. */
  liveOnly: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const o: Options = {
    calls: DATASET_CALLS,
    requests: 2_000,
    warmup: 100,
    maxSecondsPerRun: 30,
    liveExecs: 200,
    busyExecs: 20,
    busyIntervalMs: 20,
    storeIterations: 300,
    cacheDir: path.join(tmpdir(), 'cnirec-bench-api-latency'),
    rebuild: false,
    out: path.join(ROOT, 'bench/results'),
    liveOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const int = (min: number): number => {
      const n = Number(next());
      if (!Number.isInteger(n) || n < min) throw new Error(`${a} needs an integer >= ${min}`);
      return n;
    };
    if (a === '--calls') o.calls = int(1000);
    else if (a === '--requests') o.requests = int(10);
    else if (a === '--warmup') o.warmup = int(0);
    else if (a === '--max-seconds-per-run') o.maxSecondsPerRun = int(1);
    else if (a === '--live-execs') o.liveExecs = int(1);
    else if (a === '--busy-execs') o.busyExecs = int(0);
    else if (a === '--busy-interval-ms') o.busyIntervalMs = int(0);
    else if (a === '--store-iterations') o.storeIterations = int(1);
    else if (a === '--cache-dir') o.cacheDir = path.resolve(next());
    else if (a === '--rebuild') o.rebuild = true;
    else if (a === '--out') o.out = path.resolve(next());
    else if (a === '--live-only') o.liveOnly = true;
    else throw new Error(`unknown option ${a}`);
  }
  return o;
}

const t0 = Date.now();
function progress(msg: string): void {
  console.error(`[api-latency ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${msg}`);
}

function sh(cmd: string, args: readonly string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return '';
  }
}


// ------------------------------------------------------------------ daemon

interface Daemon extends BenchDaemon {
  readonly startupSeconds: number;
}

/** Started by this run and not yet stopped: killed if the run dies. */
let running: BenchDaemon | null = null;

async function health(url: string): Promise<Record<string, unknown> | null> {
  try {
    return (await (await fetch(`${url}/healthz`)).json()) as Record<string, unknown>;
  } catch {
    return null;
  }
}

async function startDaemon(dbFile: string): Promise<Daemon> {
  const start = Date.now();
  const d = await startBenchDaemon({
    db: dbFile,
    // The V8 flag bin/cnirec.js's shebang gives the daemon, as an operator starts it.
    nodeFlags: ['--max-old-space-size=192'],
    // Retention off: the data set is dated when it was built, and deleting its older days mid-run would
    // measure the deletes (and page through a shrinking table) instead of the queries.
    extraArgs: ['--log-level', 'info', '--retention-max-age', '0', '--retention-max-db-size', '0'],
    readyTimeoutMs: 120_000,
  });
  running = d;
  return Object.assign(d, { startupSeconds: (Date.now() - start) / 1000 });
}

async function stopDaemon(d: Daemon): Promise<void> {
  await d.stop(15_000);
  running = null;
}

function emergencyStop(): void {
  running?.kill();
}

// ----------------------------------------------------------------- machine

function machineInfo(): Machine {
  const db = new BetterSqlite3(':memory:');
  const sqlite = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  db.close();
  return {
    nproc: Number(sh('nproc', [])) || cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    os: /PRETTY_NAME="([^"]+)"/.exec(existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : '')?.[1] ?? '',
    node: process.version,
    sqlite,
    bpftrace: sh('bpftrace', ['--version']),
    loadAverageAtStart: loadavg().map((x) => round(x, 2)),
  };
}

/** Random existing call ids (any command, any plugin), by rowid. */
function sampleCallIds(dbFile: string, n: number, rnd: () => number): string[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const max = (db.prepare('SELECT max(rowid) AS m FROM calls').get() as { m: number }).m;
    const byRowid = db.prepare<[number], { id: string }>('SELECT id FROM calls WHERE rowid = ?');
    const ids: string[] = [];
    while (ids.length < n) {
      const row = byRowid.get(1 + Math.floor(rnd() * max));
      if (row) ids.push(row.id);
    }
    return ids;
  } finally {
    db.close();
  }
}

/** Pods of random calls (VERSION probes name none) whose name `keep` accepts. */
function samplePods(dbFile: string, n: number, rnd: () => number, keep: (p: PodName) => boolean): PodIncarnation[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const max = (db.prepare('SELECT max(rowid) AS m FROM calls').get() as { m: number }).m;
    const byRowid = db.prepare<[number], PodIncarnation>(
      'SELECT pod_namespace AS namespace, pod_name AS name, pod_uid AS uid FROM calls WHERE rowid = ? AND pod_uid IS NOT NULL',
    );
    const pods: PodIncarnation[] = [];
    while (pods.length < n) {
      const row = byRowid.get(1 + Math.floor(rnd() * max));
      if (row && keep(row)) pods.push(row);
    }
    return pods;
  } finally {
    db.close();
  }
}

/** Every pod (UID) the busy names had. */
function podsOfNames(dbFile: string, names: readonly PodName[]): PodIncarnation[] {
  const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
  try {
    const uids = db.prepare<[string, string], PodIncarnation>(
      'SELECT DISTINCT pod_namespace AS namespace, pod_name AS name, pod_uid AS uid FROM calls WHERE pod_namespace = ? AND pod_name = ? AND pod_uid IS NOT NULL',
    );
    return names.flatMap((p) => uids.all(p.namespace, p.name));
  } finally {
    db.close();
  }
}

/** exec → websocket on an otherwise idle node, then (unless --busy-execs 0) with other CNI activity meanwhile. */
async function measureLiveParts(url: string, opts: Options, ourPids: () => number[]): Promise<{ live: LiveResult; liveBusy: LiveResult | null }> {
  progress(`exec → websocket: ${opts.liveExecs} × ${PLUGIN} ADD`);
  const liveCpu = cpuWindow(ourPids);
  const live: LiveResult = { ...(await measureLive(url, opts.liveExecs, progress)), cpu: liveCpu() };
  if (live.startedMs) progress(`  call.started p50 ${live.startedMs.p50} ms, p99 ${live.startedMs.p99} ms; call.finished p99 ${live.finishedMs?.p99 ?? '?'} ms`);
  else progress(`  not measured: ${live.reason ?? 'no messages'}`);
  let liveBusy: LiveResult | null = null;
  if (opts.busyExecs > 0) {
    progress(`exec → websocket with other CNI activity: ${opts.busyExecs} execs, background VERSION execs ${opts.busyIntervalMs} ms apart`);
    const busyCpu = cpuWindow(ourPids);
    liveBusy = await measureLive(url, opts.busyExecs, progress, { backgroundIntervalMs: opts.busyIntervalMs });
    liveBusy = { ...liveBusy, cpu: busyCpu() };
    if (liveBusy.startedMs) progress(`  call.started p50 ${liveBusy.startedMs.p50} ms, p99 ${liveBusy.startedMs.p99} ms (${liveBusy.background?.perSecond ?? '?'} background execs/s)`);
  }
  return { live, liveBusy };
}

/**
 * --live-only: the daemon on an empty store, the live part alone. Quick (a
 * minute or two) for work on the tracer-to-tail path; writes
 * api-latency-live.{json,md} so the full run's results stay as they are.
 */
async function mainLiveOnly(opts: Options, machine: Machine): Promise<void> {
  const work = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-api-latency-live-'));
  try {
    progress('starting the daemon (full capture, empty store)');
    const daemon = await startDaemon(path.join(work, 'live.db'));
    progress(`daemon ${daemon.pid} at ${daemon.url}, tracer ${daemon.tracerPid}, ready in ${daemon.startupSeconds.toFixed(1)} s`);
    await sleep(1000);
    const ourPids = () => [process.pid, daemon.pid, daemon.tracerPid];
    const afterStartup = procMemory(daemon.pid);
    await createQuietGate(30_000)(10_000, 0.3);
    const { live, liveBusy } = await measureLiveParts(daemon.url, opts, ourPids);
    const afterLive = procMemory(daemon.pid);
    const healthAtEnd = await health(daemon.url);
    const tracerMetrics = await tracerGauges(daemon.url);
    progress('stopping the daemon');
    await stopDaemon(daemon);
    const report: LiveOnlyReport = {
      benchmark: 'api-latency-live',
      command: [COMMAND, ...process.argv.slice(2)].join(' '),
      date: new Date().toISOString(),
      durationSeconds: round((Date.now() - t0) / 1000, 1),
      machine,
      options: { liveExecs: opts.liveExecs, busyExecs: opts.busyExecs, busyIntervalMs: opts.busyIntervalMs },
      targets: TARGETS,
      daemon: { startupSeconds: round(daemon.startupSeconds, 2), capture: 'full', finalizeGraceMs: Number(settings.finalizeGraceMs.default()), healthAtEnd, tracerMetrics },
      live,
      liveBusy,
      memory: { afterStartup, afterLive },
      verdict: liveVerdict(live),
    };
    mkdirSync(opts.out, { recursive: true });
    writeFileSync(path.join(opts.out, 'api-latency-live.json'), `${JSON.stringify(report, null, 1)}\n`);
    writeFileSync(path.join(opts.out, 'api-latency-live.md'), liveOnlyMarkdown(report));
    progress(`wrote ${path.join(opts.out, 'api-latency-live.json')} and api-latency-live.md`);
    progress(`liveStarted: ${report.verdict.met === null ? 'not measured' : report.verdict.met ? 'met' : 'NOT met'} (${report.verdict.detail})`);
  } finally {
    emergencyStop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** The daemon's tracer_* gauges from /metrics (e.g. its reorder window), for the report. */
async function tracerGauges(url: string): Promise<Record<string, number>> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^(cnirec_tracer_[a-z_]+) (\S+)$/gm)) out[m[1]!] = Number(m[2]);
    return out;
  } catch {
    return {};
  }
}

// -------------------------------------------------------------------- main

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  if (process.getuid?.() !== 0) throw new Error('run as root: the benchmark starts the real daemon, which runs bpftrace');
  if (!existsSync(PLUGIN)) throw new Error(`${PLUGIN} is missing (apt-get install containernetworking-plugins)`);
  const machine = machineInfo();
  progress(`machine: ${machine.nproc} × ${machine.cpuModel}, load ${machine.loadAverageAtStart.join(' ')}`);
  if (opts.liveOnly) return mainLiveOnly(opts, machine);

  const dataset = ensureDataset({ calls: opts.calls, cacheDir: opts.cacheDir, rebuild: opts.rebuild, progress });
  const work = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-api-latency-run-'));
  const quietGate = createQuietGate(60_000);
  try {
    progress('copying the data set for this run (and flushing the copy to disk)');
    const copyStart = Date.now();
    const dbFile = copyDataset(dataset, work);
    progress(`  copied in ${((Date.now() - copyStart) / 1000).toFixed(1)} s`);
    const busyNames = new Set(dataset.busyPods.map((p) => `${p.namespace}/${p.name}`));
    const ctx: ScenarioContext = {
      pods: samplePods(dbFile, 2_000, seededRandom(11), (p) => !busyNames.has(`${p.namespace}/${p.name}`)),
      busyPods: dataset.busyPods,
      busyPodUids: podsOfNames(dbFile, dataset.busyPods),
      callIds: sampleCallIds(dbFile, 2_000, seededRandom(7)),
      firstUs: dataset.firstStartedAtUs,
      lastUs: dataset.lastStartedAtUs,
    };

    progress('starting the daemon (full capture)');
    const daemon = await startDaemon(dbFile);
    progress(`daemon ${daemon.pid} at ${daemon.url}, tracer ${daemon.tracerPid}, ready in ${daemon.startupSeconds.toFixed(1)} s`);
    await sleep(1000);
    const ourPids = () => [process.pid, daemon.pid, daemon.tracerPid];
    const memory: { -readonly [K in keyof MemoryReadings]: MemoryReadings[K] } = {
      afterStartup: procMemory(daemon.pid),
      afterQueries: null,
      afterLive: null,
      tracerAfterQueries: null,
    };

    const all: Scenario[] = [HEALTHZ_SCENARIO, ...restScenarios(ctx)];
    const infos: ScenarioInfo[] = [];
    const http: LoadResult[] = [];
    for (const [k, scenario] of all.entries()) {
      let missing: string | null = null;
      for (const concurrency of CONCURRENCIES) {
        const busy = await quietGate(10_000, 0.3);
        progress(`${scenario.id} at concurrency ${concurrency} (machine ${Math.round(busy * 100)}% busy before)`);
        try {
          const r = await runLoad(daemon.url, scenario, {
            requests: opts.requests,
            warmup: opts.warmup,
            maxSeconds: opts.maxSecondsPerRun,
            concurrency,
            rnd: seededRandom(1000 + k * 10 + concurrency),
            ourPids,
          });
          http.push({ ...r, daemonMemoryAfter: procMemory(daemon.pid) });
          progress(
            `  p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, ${Math.round(r.requestsPerSecond)} req/s, ${r.itemsPerResponse} items, ${r.bytesPerResponse} B${r.errors ? `, ${r.errors} errors` : ''}`,
          );
        } catch (err) {
          if (!(err instanceof RouteMissingError)) throw err;
          missing = err.message;
          progress(`  not measured: ${missing}`);
          break;
        }
      }
      infos.push({ id: scenario.id, route: scenario.route, shape: scenario.shape, missing });
    }
    memory.afterQueries = procMemory(daemon.pid);
    memory.tracerAfterQueries = procMemory(daemon.tracerPid);
    progress(`daemon memory after the queries: ${JSON.stringify(memory.afterQueries)}`);

    progress('store diagnostics (same queries in-process, no HTTP)');
    // Lists without ?limit= get the route's default page size.
    const storeCpu = cpuWindow(ourPids);
    const store = diagnoseStore(dbFile, ctx, DEFAULT_PAGE_SIZE, opts.storeIterations, STORE_STEP_SECONDS, seededRandom(99));
    const storeCpuShare = storeCpu();
    for (const s of store) {
      progress(
        `  ${s.scenario}: p50/p99 ms store ${s.storeMs.p50}/${s.storeMs.p99}, +json ${s.storeAndJsonMs.p50}/${s.storeAndJsonMs.p99}, +route ${s.storeAndRouteMs.p50}/${s.storeAndRouteMs.p99}; ${s.rowsPerQuery} rows`,
      );
    }

    await quietGate(10_000, 0.3);
    const { live, liveBusy } = await measureLiveParts(daemon.url, opts, ourPids);
    memory.afterLive = procMemory(daemon.pid);
    const healthAtEnd = await health(daemon.url);

    progress('stopping the daemon');
    await stopDaemon(daemon);

    const report: Report = {
      benchmark: 'api-latency',
      command: COMMAND,
      date: new Date().toISOString(),
      durationSeconds: round((Date.now() - t0) / 1000, 1),
      machine,
      options: { ...opts, concurrencies: CONCURRENCIES },
      targets: TARGETS,
      dataset: { ...dataset, samplePods: ctx.pods.slice(0, 5).map((p) => `${p.namespace}/${p.name}`) },
      daemon: { startupSeconds: round(daemon.startupSeconds, 2), capture: 'full', finalizeGraceMs: Number(settings.finalizeGraceMs.default()), healthAtEnd },
      scenarios: infos,
      http,
      store,
      storeCpu: storeCpuShare,
      live,
      liveBusy,
      memory,
      verdicts: verdicts(http, infos, live, memory),
    };
    mkdirSync(opts.out, { recursive: true });
    writeFileSync(path.join(opts.out, 'api-latency.json'), `${JSON.stringify(report, null, 1)}\n`);
    writeFileSync(path.join(opts.out, 'api-latency.md'), markdown(report));
    progress(`wrote ${path.join(opts.out, 'api-latency.json')} and api-latency.md`);
    for (const [name, v] of Object.entries(report.verdicts)) progress(`${name}: ${v.met === null ? 'not measured' : v.met ? 'met' : 'NOT met'} (${v.detail})`);
  } finally {
    emergencyStop();
    rmSync(work, { recursive: true, force: true });
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    emergencyStop();
    process.exit(130);
  });
}

try {
  await main();
} catch (err) {
  const d = running as BenchDaemon | null;
  emergencyStop();
  if (d) console.error(d.logs().slice(-3000));
  console.error(`api-latency: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  process.exitCode = 1;
}
