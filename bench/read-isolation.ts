/**
 * Read isolation: what the API's read workers (api/reads/) change for the
 * live tail while people query, and what they cost.
 *
 *   npm run build && node dist/bench/read-isolation.js     (as root: the real daemon runs bpftrace)
 *
 * On the API benchmark's 1,000,000-call data set (cached by api-latency.ts,
 * populated here if missing), for each --workers value (default 0,1,2) the
 * real daemon (full capture, bpftrace attached, retention off) is started
 * with --api-read-workers N on one private copy of the file, then:
 *
 * 1. exec → websocket `call.started` for --execs host-local ADDs, one at a
 *    time, with nothing else going on (as api-latency.ts's live part);
 * 2. the same while another process keeps --concurrency clients asking for
 *    the heaviest reads of api-latency.ts: the busy StatefulSet names' whole
 *    stories and their first page of calls (read-load.ts);
 * 3. that load's answers per second and latency, and the daemon's peak
 *    memory (VmHWM, all threads) after it.
 *
 * Each daemon gets the same data, load and execs within minutes of the
 * others, so compare the rows with each other: absolute numbers move with
 * the machine. Writes bench/results/read-isolation.{json,md}.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { copyDataset, DATASET_CALLS, ensureDataset } from './api-latency-data.js';
import { measureLive, type LiveResult } from './api-latency-live.js';
import { distribution, procMemory, type Distribution, type ProcMemory } from './lib/stats.js';
import { startBenchDaemon } from './lib/daemon-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const COMMAND = 'node dist/bench/read-isolation.js';
/** The load runs this long before the execs start, so its clients and the daemon's heap are warm. */
const WARM_MS = 2_000;

const { values: opts } = parseArgs({
  options: {
    workers: { type: 'string', default: '0,1,2' },
    execs: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
    'cache-dir': { type: 'string', default: path.join(tmpdir(), 'cnirec-bench-api-latency') },
    out: { type: 'string', default: path.join(ROOT, 'bench/results') },
  },
});
const workerCounts = opts.workers.split(',').map(Number);
const execs = Number(opts.execs);
const concurrency = Number(opts.concurrency);
if (workerCounts.some((n) => !Number.isInteger(n) || n < 0) || !(execs > 0) || !(concurrency > 0)) {
  throw new Error('--workers takes integers >= 0 (comma-separated), --execs and --concurrency positive integers');
}

interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly latencyMs: Distribution;
}

interface Row {
  readonly workers: number;
  readonly idle: LiveResult;
  readonly underLoad: LiveResult;
  readonly load: LoadResult;
  readonly memoryAfterStartup: ProcMemory | null;
  readonly memoryAfterLoad: ProcMemory | null;
}

const t0 = Date.now();
const progress = (msg: string) => console.error(`[read-isolation ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${msg}`);

async function runLoad(url: string, paths: readonly string[], during: () => Promise<void>): Promise<LoadResult> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'read-load.js'), url, String(concurrency), ...paths], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = Date.now();
  try {
    await new Promise((r) => setTimeout(r, WARM_MS));
    await during();
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  const seconds = (Date.now() - started) / 1000;
  const r = JSON.parse(out) as { requests: number; errors: number; latenciesMs: number[] };
  return { requests: r.requests, errors: r.errors, perSecond: Math.round(r.requests / seconds), latencyMs: distribution(r.latenciesMs) };
}

async function main(): Promise<void> {
  const dataset = ensureDataset({ calls: DATASET_CALLS, cacheDir: opts['cache-dir'], rebuild: false, progress });
  const work = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-read-isolation-'));
  const rows: Row[] = [];
  try {
    progress('copying the data set');
    const db = copyDataset(dataset, work);
    const paths = dataset.busyPods.flatMap((p) => [`/api/v1/pods/${p.namespace}/${p.name}`, `/api/v1/calls?namespace=${p.namespace}&pod=${p.name}`]);
    for (const workers of workerCounts) {
      progress(`daemon with --api-read-workers ${workers}`);
      const d = await startBenchDaemon({
        db,
        nodeFlags: ['--max-old-space-size=192'],
        extraArgs: ['--api-read-workers', String(workers), '--retention-max-age', '0', '--retention-max-db-size', '0'],
      });
      try {
        const memoryAfterStartup = procMemory(d.pid);
        const idle = await measureLive(d.url, execs, progress);
        progress(`  idle: call.started p50 ${idle.startedMs?.p50} ms, p99 ${idle.startedMs?.p99} ms`);
        let underLoad: LiveResult | null = null;
        const load = await runLoad(d.url, paths, async () => {
          underLoad = await measureLive(d.url, execs, progress);
        });
        const loaded = underLoad as LiveResult | null;
        if (loaded === null) throw new Error('the live measurement under load did not run');
        const memoryAfterLoad = procMemory(d.pid);
        progress(`  under load: call.started p50 ${loaded.startedMs?.p50} ms, p99 ${loaded.startedMs?.p99} ms; load ${load.perSecond} req/s, p50 ${load.latencyMs.p50} ms; VmHWM ${memoryAfterLoad?.vmHwmMiB} MiB`);
        rows.push({ workers, idle, underLoad: loaded, load, memoryAfterStartup, memoryAfterLoad });
      } finally {
        await d.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const report = {
    date: new Date(t0).toISOString(),
    command: COMMAND,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', loadAverageAtStart: loadavg(), node: process.version },
    options: { workers: workerCounts, execs, concurrency, warmMs: WARM_MS },
    dataset: { calls: dataset.calls, busyNames: dataset.busyPods.length, busyPodCalls: dataset.busyPodCalls },
    rows,
  };
  mkdirSync(opts.out, { recursive: true });
  writeFileSync(path.join(opts.out, 'read-isolation.json'), `${JSON.stringify(report, null, 1)}\n`);
  writeFileSync(path.join(opts.out, 'read-isolation.md'), markdown(report));
  progress(`wrote ${path.join(opts.out, 'read-isolation.{json,md}')}`);
}

function markdown(r: { date: string; machine: { cpus: number; cpuModel: string; loadAverageAtStart: number[]; node: string }; dataset: { calls: number; busyNames: number }; rows: readonly Row[] }): string {
  const f = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(1));
  const live = (l: LiveResult) => `${f(l.startedMs?.p50)} / ${f(l.startedMs?.p99)}${l.missingStarted > 0 ? ` (${l.missingStarted} never arrived)` : ''}`;
  return [
    '# Read isolation',
    '',
    `${r.date}, ${r.machine.cpus} × ${r.machine.cpuModel}, Node ${r.machine.node}; load average at the start ${r.machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}.`,
    `Command: \`${COMMAND}\`. The real daemon (\`--capture full\`, bpftrace attached, retention off) on the ${r.dataset.calls.toLocaleString('en-US')}-call data set of api-latency.ts, once per \`--api-read-workers\` value.`,
    `Load: ${concurrency} closed-loop clients in another process asking in turn for the ${r.dataset.busyNames} busy StatefulSet names' whole stories (~550 KiB each) and their first page of calls, from ${WARM_MS / 1000} s before the execs until after them.`,
    `Live: ${execs} \`host-local\` ADDs one at a time, timed from just before spawn to the tail's \`call.started\` (as in api-latency.md).`,
    '',
    '| read workers | call.started p50 / p99 ms, idle | call.started p50 / p99 ms, under load | load answers/s | load p50 / p99 ms | load errors | daemon VmRSS after startup MiB | daemon VmHWM after the load MiB |',
    '|---|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (row) =>
        `| ${row.workers === 0 ? '0 (main thread)' : row.workers} | ${live(row.idle)} | ${live(row.underLoad)} | ${row.load.perSecond} | ${f(row.load.latencyMs.p50)} / ${f(row.load.latencyMs.p99)} | ${row.load.errors} | ${f(row.memoryAfterStartup?.vmRssMiB)} | ${f(row.memoryAfterLoad?.vmHwmMiB)} |`,
    ),
    '',
  ].join('\n');
}

await main();
