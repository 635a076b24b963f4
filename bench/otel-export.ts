/**
 * What OpenTelemetry export costs and how far behind it runs: a trivial CNI
 * plugin exec'd at a steady rate (100 and 1,000 calls/s) against the real
 * daemon and bpftrace, once without export and once exporting to an
 * OTLP/HTTP receiver in this process (which decodes every request with the
 * official .proto definitions), alternating, `--reps` times per rate.
 *
 *   npm run build && flock /tmp/cnirec-heavy.lock node dist/bench/otel-export.js [--seconds 20] [--reps 2] [--rates 100,1000]
 *
 * Per call: export lag = when the receiver had the span − the call's
 * recorded end, and the same to the live tail's `call.finished` (what
 * recording itself takes: the finalize grace and the reorder window), so the
 * difference is the export's own. Per run: the daemon's CPU (utime+stime
 * from /proc, from the load's start until everything was recorded and
 * exported) per call and as a share of a core at that rate, its peak RSS,
 * calls made and recorded, lost tracer records, and the backlog left.
 * Writes bench/results/otel-export.{json,md} (`--out DIR` elsewhere).
 */

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import WebSocket from 'ws';
import { rssBytes, TRIVIAL_PLUGIN, TRIVIAL_PLUGIN_DIR } from './flood-load.js';
import { startBenchDaemon } from './lib/daemon-process.js';
import { startOtlpReceiver, type OtlpReceiver } from './lib/otlp-receiver.js';
import { distribution, type Distribution } from './lib/stats.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Calls per second one shell loop sustains comfortably on this machine; more loops for higher rates. */
const PER_LOOP_RATE = 250;

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    reps: { type: 'string', default: '2' },
    rates: { type: 'string', default: '100,1000' },
    out: { type: 'string', default: path.join(ROOT, 'bench/results') },
  },
  strict: true,
});
const seconds = Number(values.seconds);
const reps = Number(values.reps);
const rates = values.rates.split(',').map(Number);

// One loop: exec the plugin every `interval` µs from its start (bash 5's EPOCHREALTIME), sleeping with the
// `read -t` builtin on a pipe nobody writes to, so pacing execs nothing the tracer would see.
const PACED_LOOP = `
exec {never}<> <(:)
rate=$1; secs=$2; prefix=$3; dir=$4; plugin=$5
interval=$((1000000 / rate)); start=\${EPOCHREALTIME/./}; end=$((start + secs * 1000000)); n=0
while :; do
  now=\${EPOCHREALTIME/./}
  (( now >= end )) && break
  next=$((start + n * interval))
  if (( next > now )); then d=$((next - now)); read -t "$((d / 1000000)).$(printf %06d $((d % 1000000)))" -u "$never"; fi
  CNI_COMMAND=ADD CNI_CONTAINERID="$prefix-$n" CNI_NETNS=/var/run/netns/none CNI_IFNAME=eth0 CNI_PATH="$dir" "$plugin" </dev/null >/dev/null
  n=$((n + 1))
done
echo "$n"
`;

function pacedLoop(rate: number, prefix: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', PACED_LOOP, 'paced', String(rate), String(seconds), prefix, TRIVIAL_PLUGIN_DIR, TRIVIAL_PLUGIN], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(Number(out.trim()) || 0));
  });
}

const CLK_TCK = 100;
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

interface Run {
  rate: number;
  export: boolean;
  callsMade: number;
  callsPerSecond: number;
  callsRecorded: number;
  lostEvents: number;
  /** Daemon CPU from the load's start until it had recorded (and exported) everything. */
  daemonCpuSeconds: number;
  /** That CPU as a share of one core over the load's duration: what handling this rate costs. */
  daemonCpuPercent: number;
  daemonCpuUsPerCall: number;
  /** From the load's end until everything was recorded (and exported). */
  catchUpSeconds: number;
  idleRssMiB: number;
  peakRssMiB: number;
  /** ms from a call's recorded end to its `call.finished` on the live tail. */
  tailLagMs: Distribution;
  /** ms from a call's recorded end to its span at the receiver (export on only). */
  exportLagMs: Distribution | null;
  /** ms from the tail's `call.finished` to the span at the receiver: the export's own share. */
  exportAfterTailMs: Distribution | null;
  callsExported: number | null;
  callsExportedTwice: number | null;
  backlogAtEnd: number | null;
}

async function measure(rate: number, withExport: boolean, dir: string, receiver: OtlpReceiver): Promise<Run> {
  const prefix = `otelb${Date.now().toString(36)}`;
  const daemon = await startBenchDaemon({
    db: path.join(dir, `${prefix}.db`),
    extraArgs: ['--cni-cache-dirs', '', '--host-local-dirs', '', ...(withExport ? ['--otlp-endpoint', receiver.url] : [])],
  });
  const tailAt = new Map<string, { atMs: number; endUs: number }>();
  const ws = new WebSocket(`${daemon.url.replace('http', 'ws')}/api/v1/tail?command=ADD`);
  ws.on('message', (data: Buffer) => {
    const atMs = Date.now();
    const msg = JSON.parse(data.toString('utf8')) as { type: string; call?: { id: string; containerId: string | null; endedAt: string | null } };
    if (msg.type === 'call.finished' && msg.call?.containerId?.startsWith(prefix) && msg.call.endedAt) tailAt.set(msg.call.id, { atMs, endUs: Date.parse(msg.call.endedAt) * 1000 });
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  try {
    await new Promise((r) => setTimeout(r, 2000));
    const idleRss = rssBytes(daemon.pid);
    const spansBefore = receiver.spanArrivals.length;
    const cpu0 = cpuSeconds(daemon.pid);
    let peakRss = idleRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(daemon.pid))), 250);
    const loops = Math.max(1, Math.ceil(rate / PER_LOOP_RATE));
    const t0 = Date.now();
    const counts = await Promise.all(Array.from({ length: loops }, (_, i) => pacedLoop(rate / loops, `${prefix}-${i}`)));
    const loadSeconds = (Date.now() - t0) / 1000;
    // Caught up: every call recorded (the tail's count steady for 2 s, none open) and, with export, sent.
    const health = await caughtUp(daemon.url, () => tailAt.size);
    const cpu = cpuSeconds(daemon.pid) - cpu0;
    const catchUpSeconds = (Date.now() - t0) / 1000 - loadSeconds;
    clearInterval(sampler);

    const tailLags = [...tailAt.values()].map((t) => t.atMs - t.endUs / 1000);
    let exportLags: number[] | null = null;
    let afterTail: number[] | null = null;
    let exportedTwice: number | null = null;
    if (withExport) {
      const arrivals = receiver.spanArrivals.slice(spansBefore).filter((a) => String(a.span.attributes['container.id'] ?? '').startsWith(prefix));
      const seen = new Map<string, number>();
      for (const a of arrivals) seen.set(a.span.spanId, (seen.get(a.span.spanId) ?? 0) + 1);
      exportedTwice = [...seen.values()].filter((n) => n > 1).length;
      exportLags = arrivals.map((a) => a.atMs - Number(a.span.endNs / 1_000_000n));
      afterTail = arrivals.flatMap((a) => {
        const t = tailAt.get(String(a.span.attributes['cni.call.id']));
        return t ? [a.atMs - t.atMs] : [];
      });
    }
    const callsMade = counts.reduce((a, b) => a + b, 0);
    const recorded = recordedCalls(daemon.db, prefix);
    return {
      rate,
      export: withExport,
      callsMade,
      callsPerSecond: Math.round(callsMade / loadSeconds),
      callsRecorded: recorded,
      lostEvents: health.tracer.lostEvents,
      daemonCpuSeconds: Math.round(cpu * 100) / 100,
      daemonCpuPercent: Math.round((1000 * cpu) / loadSeconds) / 10,
      daemonCpuUsPerCall: recorded === 0 ? Number.NaN : Math.round((cpu * 1e6) / recorded),
      catchUpSeconds: Math.round(catchUpSeconds * 10) / 10,
      idleRssMiB: Math.round(idleRss / 2 ** 20),
      peakRssMiB: Math.round(peakRss / 2 ** 20),
      tailLagMs: distribution(tailLags),
      exportLagMs: exportLags ? distribution(exportLags) : null,
      exportAfterTailMs: afterTail ? distribution(afterTail) : null,
      callsExported: exportLags ? new Set(receiver.spanArrivals.slice(spansBefore).filter((a) => String(a.span.attributes['container.id'] ?? '').startsWith(prefix)).map((a) => a.span.spanId)).size : null,
      callsExportedTwice: exportedTwice,
      backlogAtEnd: health.otel ? health.otel.backlog : null,
    };
  } finally {
    ws.close();
    await daemon.stop();
  }
}

/** Calls of this run the daemon stored, finished or incomplete (the tail's count leaves out calls without an end). */
function recordedCalls(db: string, prefix: string): number {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    return (conn.prepare("SELECT count(*) AS n FROM calls WHERE container_id LIKE ? AND status <> 'running'").get(`${prefix}-%`) as { n: number }).n;
  } finally {
    conn.close();
  }
}

interface Health {
  tracer: { lostEvents: number };
  calls: { openCalls: number };
  otel: { backlog: number } | null;
}

/** Waits (at most 120 s) until recording is done (count steady 2 s, nothing open) and nothing waits for export. */
async function caughtUp(url: string, recorded: () => number): Promise<Health> {
  const deadline = Date.now() + 120_000;
  let last = -1;
  let steadySince = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const health = (await (await fetch(`${url}/healthz`)).json()) as Health;
    const n = recorded();
    if (n !== last) {
      last = n;
      steadySince = Date.now();
    }
    const done = Date.now() - steadySince >= 2000 && health.calls.openCalls === 0 && (health.otel === null || health.otel.backlog === 0);
    if (done || Date.now() > deadline) return health;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-otel-'));
  const receiver = await startOtlpReceiver();
  const loadBefore = loadavg();
  const runs: Run[] = [];
  try {
    for (const rate of rates) {
      for (let rep = 0; rep < reps; rep++) {
        // Alternate which goes first, so drift on a shared machine lands on both alike.
        for (const withExport of rep % 2 === 0 ? [false, true] : [true, false]) {
          const r = await measure(rate, withExport, dir, receiver);
          console.log(JSON.stringify({ rate: r.rate, export: r.export, callsPerSecond: r.callsPerSecond, cpu: r.daemonCpuPercent, peakRssMiB: r.peakRssMiB, exportLagMs: r.exportLagMs, backlog: r.backlogAtEnd }));
          runs.push(r);
        }
      }
    }
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const model = cpus()[0]?.model ?? 'unknown';
  const result = { date: new Date().toISOString(), machine: { cpus: cpus().length, model, loadavgBefore: loadBefore, loadavgAfter: loadavg() }, settings: { seconds, reps, rates }, runs };
  mkdirSync(values.out, { recursive: true });
  writeFileSync(path.join(values.out, 'otel-export.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(values.out, 'otel-export.md'), markdown(result));
  console.log(markdown(result));
}

function markdown(r: { date: string; machine: { cpus: number; model: string; loadavgBefore: number[]; loadavgAfter: number[] }; settings: { seconds: number; reps: number }; runs: Run[] }): string {
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  const rows = rates.map((rate) => {
    const off = r.runs.filter((x) => x.rate === rate && !x.export);
    const on = r.runs.filter((x) => x.rate === rate && x.export);
    const m = (xs: Run[], f: (x: Run) => number) => median(xs.map(f));
    const cpuOff = m(off, (x) => x.daemonCpuPercent);
    const cpuOn = m(on, (x) => x.daemonCpuPercent);
    const usOff = m(off, (x) => x.daemonCpuUsPerCall);
    const usOn = m(on, (x) => x.daemonCpuUsPerCall);
    const rssOff = m(off, (x) => x.peakRssMiB);
    const rssOn = m(on, (x) => x.peakRssMiB);
    return (
      `| ${rate}/s | ${m(on, (x) => x.callsPerSecond)}/s | ${m(on, (x) => x.exportLagMs?.p50 ?? NaN).toFixed(0)} / ${m(on, (x) => x.exportLagMs?.p99 ?? NaN).toFixed(0)} ms | ` +
      `${m(on, (x) => x.tailLagMs.p50).toFixed(0)} / ${m(on, (x) => x.tailLagMs.p99).toFixed(0)} ms | ${m(on, (x) => x.exportAfterTailMs?.p50 ?? NaN).toFixed(0)} / ${m(on, (x) => x.exportAfterTailMs?.p99 ?? NaN).toFixed(0)} ms | ` +
      `${cpuOff.toFixed(1)}% → ${cpuOn.toFixed(1)}% (+${(cpuOn - cpuOff).toFixed(1)} pts) | ${usOff} → ${usOn} µs (+${usOn - usOff}) | ${rssOff} → ${rssOn} MiB (+${rssOn - rssOff}) | ` +
      `${on.map((x) => `${x.callsExported}/${x.callsRecorded}`).join(', ')} | ${on.map((x) => x.callsExportedTwice).join(', ')} | ${on.map((x) => x.backlogAtEnd).join(', ')} |`
    );
  });
  return [
    '# OpenTelemetry export',
    '',
    `${r.date}: a trivial plugin (\`test/e2e/fixtures/plugins/trivial.sh\`) exec'd at a steady rate for ${r.settings.seconds} s, real daemon (\`--capture full\`) and bpftrace,`,
    `without export and exporting traces and logs (payloads capped) to an OTLP/HTTP receiver in the benchmark process; ${r.settings.reps} runs of each, alternating, medians shown.`,
    `${r.machine.cpus} CPUs (${r.machine.model}), shared; load average (1/5/15 min) ${load(r.machine.loadavgBefore)} before, ${load(r.machine.loadavgAfter)} after.`,
    '',
    '| target rate | achieved | export lag p50 / p99 (call end → receiver) | of which recording (call end → live tail) p50 / p99 | export\'s own (tail → receiver) p50 / p99 | daemon CPU (share of one core at that rate) off → on | daemon CPU per call off → on | daemon peak RSS off → on | calls exported / recorded (each run) | exported twice | backlog at end |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Recording takes its share first: a call is final 250 ms after its exit (`--finalize-grace-ms`, for records other CPUs',
    'deliver late) plus the reorder window; export then waits 20 ms to batch a burst, reads the rows back and sends.',
    'Daemon CPU is utime+stime of the node daemon from the load\'s start until it had recorded and exported every call,',
    "per call and as a share of one core over the load's duration; the receiver runs in the benchmark's own process.",
    "The trivial plugin's payloads are small (60 B of stdout); the burst benchmark",
    '(`burst.md`) has export on with 16 KiB configs (sent capped at 4 KiB).',
    '',
  ].join('\n');
}

await main();
