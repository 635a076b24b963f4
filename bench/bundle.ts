/**
 * Bundle benchmark: how long `cnirec bundle` takes and how big the file is for a record of 100,000 calls
 * (the API latency benchmark's generator: bridge with host-local, VERSION probes, ~2% failures, ~600 B of
 * config on stdin and ~400 B of result on stdout, over a week), made from the database alone as the CLI
 * does with the daemon down (the node's files of this machine, which are few). Goals (issue): under 10 s,
 * and under 20 MiB without payloads. Also the longest stall of the event loop while a bundle is made —
 * what a daemon making one would cost its tracer's reading — and a bundle bounded by --max-size.
 *
 *   npm run build && node dist/bench/bundle.js [--calls 100000] [--runs 3] [--cache DIR]
 *
 * Writes bench/results/bundle.json and bench/results/bundle.md.
 */

import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createRedactor } from '../collector/index.js';
import { defaultRedactionRules } from '../collector/redact/redaction-rules.js';
import { bundleRequest, makeBundle, type BundleAsk } from '../daemon/index.js';
import { ensureDataset } from './api-latency-data.js';
import { median } from './lib/stats.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    cache: { type: 'string', default: path.join(tmpdir(), 'cnirec-bench-bundle-cache') },
    out: { type: 'string', default: path.resolve(import.meta.dirname, '../../bench/results') },
  },
});
const CALLS = Number(args.calls);
const RUNS = Number(args.runs);
const GOAL_SECONDS = 10;
const GOAL_NO_PAYLOAD_MIB = 20;

const data = ensureDataset({ calls: CALLS, cacheDir: args.cache, rebuild: false, progress: (m) => console.error(m) });
const setup = {
  db: data.file,
  node: 'bench-node',
  requested: { confDirs: [], binDirs: [] },
  cacheDirs: [],
  hostLocalDirs: [],
  redactor: createRedactor(defaultRedactionRules()),
  bpftrace: 'bpftrace',
  env: {},
};
const whole: BundleAsk = { sinceUs: data.firstStartedAtUs - 1, untilUs: data.lastStartedAtUs + 3_600_000_000 };
const busy = data.busyPods[0]!;

const variants: { name: string; what: string; ask: BundleAsk }[] = [
  { name: 'all', what: `every call (${CALLS.toLocaleString('en-US')}), payloads kept`, ask: whole },
  { name: 'no-payloads', what: 'every call, --no-payloads', ask: { ...whole, payloads: false } },
  { name: 'last-6h', what: 'the default window (the last 6 hours of the week)', ask: { sinceUs: data.lastStartedAtUs - 6 * 3_600_000_000, untilUs: whole.untilUs } },
  { name: 'pod', what: `one busy pod (${busy.namespace}/${busy.name}) all week`, ask: { ...whole, pods: [`${busy.namespace}/${busy.name}`] } },
  { name: 'max-size', what: 'every call, --max-size 14MiB (payloads dropped oldest first)', ask: { ...whole, maxBytes: 14 * 1024 * 1024 } },
];

interface Sample {
  seconds: number;
  bytes: number;
  calls: number;
  payloads: string;
  loopMaxMs: number;
}

const results: Record<string, { what: string; samples: Sample[]; seconds: number; mib: number; calls: number; payloads: string; loopMaxMs: number }> = {};
for (const v of variants) {
  const samples: Sample[] = [];
  for (let r = 0; r < RUNS; r++) {
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const t0 = process.hrtime.bigint();
    const made = await makeBundle(bundleRequest(v.ask, Date.now()), setup, null);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    loop.disable();
    samples.push({ seconds, bytes: statSync(made.file).size, calls: made.manifest.rows.calls ?? 0, payloads: made.manifest.payloads.kept, loopMaxMs: loop.max / 1e6 });
    await made.cleanup();
    console.error(`${v.name} run ${r + 1}: ${seconds.toFixed(2)} s, ${(samples.at(-1)!.bytes / 1048576).toFixed(1)} MiB, loop max ${samples.at(-1)!.loopMaxMs.toFixed(0)} ms`);
  }
  results[v.name] = {
    what: v.what,
    samples,
    seconds: median(samples.map((s) => s.seconds)),
    mib: median(samples.map((s) => s.bytes)) / 1048576,
    calls: samples[0]!.calls,
    payloads: samples[0]!.payloads,
    loopMaxMs: median(samples.map((s) => s.loopMaxMs)),
  };
}

const machine = `${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node.js ${process.version}, load average ${loadavg()[0]!.toFixed(1)} at the end`;
const date = new Date().toISOString();
mkdirSync(args.out, { recursive: true });
writeFileSync(path.join(args.out, 'bundle.json'), `${JSON.stringify({ date, machine, dataset: { calls: data.calls, fileBytes: data.fileBytes, version: data.version }, runs: RUNS, results }, null, 2)}\n`);
const all = results.all!;
const bare = results['no-payloads']!;
const size = (mib: number) => (mib < 1 ? `${Math.round(mib * 1024)} KiB` : `${mib.toFixed(1)} MiB`);
const rows = Object.entries(results).map(
  ([name, r]) => `| ${name} | ${r.what} | ${r.calls.toLocaleString('en-US')} | ${r.payloads} | ${r.seconds.toFixed(2)} | ${size(r.mib)} | ${r.loopMaxMs.toFixed(0)} |`,
);
writeFileSync(
  path.join(args.out, 'bundle.md'),
  [
    '# Bundle',
    '',
    `\`node dist/bench/bundle.js --calls ${CALLS} --runs ${RUNS}\`, ${date}, ${machine}.`,
    '',
    `The record: ${data.calls.toLocaleString('en-US')} calls over a week (bench/api-latency-data.ts: bridge with host-local, VERSION probes, ~2% failures, ` +
      `~${data.stdinBytesMean} B of stdin and ~${data.stdoutBytesMean} B of stdout a call), a ${(data.fileBytes / 1048576).toFixed(0)} MiB database. ` +
      'Each bundle is made from the database alone (as `cnirec bundle` with the daemon down), with this machine\'s few CNI files; medians of the runs.',
    '',
    '| bundle | what | calls | payloads | seconds | size | longest event-loop stall (ms) |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    `Goals: every call in under ${GOAL_SECONDS} s — ${all.seconds.toFixed(1)} s, ${all.seconds < GOAL_SECONDS ? 'met' : 'NOT met'}; without payloads under ${GOAL_NO_PAYLOAD_MIB} MiB — ` +
      `${bare.mib.toFixed(1)} MiB, ${bare.mib < GOAL_NO_PAYLOAD_MIB ? 'met' : 'NOT met'}.`,
    '',
    'The longest stall is how long the bundle held the event loop at once (the snapshot copies rows in slices and lets go every ~15 ms; ' +
      'gzip runs on the thread pool): what a daemon making a bundle (GET /api/v1/bundle) costs its reading of the tracer.',
    '',
  ].join('\n'),
);
console.log(readableSummary());

function readableSummary(): string {
  return Object.entries(results)
    .map(([n, r]) => `${n}: ${r.seconds.toFixed(2)} s, ${r.mib.toFixed(1)} MiB, ${r.calls} calls, loop max ${r.loopMaxMs.toFixed(0)} ms`)
    .join('\n');
}
