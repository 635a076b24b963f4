/**
 * What the standby tracer costs: the sched-only bpftrace the daemon runs
 * beside the main one so a call is still recorded (exec, exit, tree) while
 * either restarts. Measured on the running daemon, per bpftrace process:
 * resident memory, and CPU time over an idle minute and over a burst of
 * traced execs (the only work a sched-only tracer does: a traced exec prints
 * its argv/env block, a fork or exit a line).
 *
 *   npm run build && node dist/bench/standby-tracer.js     # as root, ~2 min
 *
 * Writes bench/results/standby-tracer.{json,md}.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchDaemon } from './lib/daemon-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RESULTS = path.join(ROOT, 'bench/results');
const IDLE_MS = 60_000;
const TRACED_EXECS = 3_000;

interface Usage {
  rssBytes: number;
  cpuSeconds: number;
}

function usage(pid: number): Usage {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { cpuSeconds: (Number(f[11]) + Number(f[12])) / 100, rssBytes: Number(f[21]) * 4096 };
}

interface HealthBody {
  tracer: { ready: boolean; pid: number | null; mode: string; standby: { ready: boolean; pid: number | null } | null };
}

async function health(url: string): Promise<HealthBody> {
  return (await (await fetch(`${url}/healthz`)).json()) as HealthBody;
}

interface ModeResult {
  mode: 'full' | 'light';
  main: { rssMiB: number; idleCpuPerMin: number; burstCpuSeconds: number };
  standby: { rssMiB: number; idleCpuPerMin: number; burstCpuSeconds: number };
  burstSeconds: number;
}

const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

async function measure(mode: 'full' | 'light'): Promise<ModeResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cnirec-bench-standby-'));
  const daemon = await startBenchDaemon({ db: path.join(dir, 'cnirec.db'), capture: mode });
  try {
    let h = await health(daemon.url);
    for (let i = 0; i < 600 && !(h.tracer.ready && h.tracer.standby?.ready); i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health(daemon.url);
    }
    const mainPid = h.tracer.pid!;
    const standbyPid = h.tracer.standby!.pid!;
    await new Promise((r) => setTimeout(r, 2_000));
    const idle0 = { main: usage(mainPid), standby: usage(standbyPid) };
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle1 = { main: usage(mainPid), standby: usage(standbyPid) };
    // Traced execs: CNI_COMMAND in the environment makes each one a (tiny) call both tracers follow.
    const t0 = performance.now();
    spawnSync('bash', ['-c', `for i in $(seq ${TRACED_EXECS}); do CNI_COMMAND=VERSION /bin/true; done`], { stdio: 'ignore' });
    const burstSeconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 3_000));
    const burst = { main: usage(mainPid), standby: usage(standbyPid) };
    const part = (k: 'main' | 'standby') => ({
      rssMiB: mib(burst[k].rssBytes),
      idleCpuPerMin: round(((idle1[k].cpuSeconds - idle0[k].cpuSeconds) * 60_000) / IDLE_MS),
      burstCpuSeconds: round(burst[k].cpuSeconds - idle1[k].cpuSeconds),
    });
    return { mode, main: part('main'), standby: part('standby'), burstSeconds: round(burstSeconds, 2) };
  } finally {
    await daemon.stop(10_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: ModeResult[] = [];
for (const mode of ['light', 'full'] as const) results.push(await measure(mode));

const machine = {
  date: new Date().toISOString(),
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
  memory: `${mib(os.totalmem())} MiB`,
  kernel: os.release(),
  bpftrace: spawnSync('bpftrace', ['--version'], { encoding: 'utf8' }).stdout.trim(),
};
writeFileSync(path.join(RESULTS, 'standby-tracer.json'), `${JSON.stringify({ machine, idleMs: IDLE_MS, tracedExecs: TRACED_EXECS, results }, null, 2)}\n`);
const rows = results.flatMap((r) =>
  (['main', 'standby'] as const).map(
    (k) => `| ${r.mode} | ${k === 'main' ? `main (${r.mode})` : 'standby (light)'} | ${r[k].rssMiB} MiB | ${r[k].idleCpuPerMin} s | ${r[k].burstCpuSeconds} s (${TRACED_EXECS} traced execs in ${r.burstSeconds} s) |`,
  ),
);
writeFileSync(
  path.join(RESULTS, 'standby-tracer.md'),
  [
    '# The standby tracer’s cost',
    '',
    `${machine.date}; ${machine.cpus}, ${machine.memory}, kernel ${machine.kernel}, ${machine.bpftrace}. \`node dist/bench/standby-tracer.js\`.`,
    '',
    'Per bpftrace process of one daemon: resident memory, CPU time over an idle minute, and CPU time for a burst of',
    `${TRACED_EXECS} traced execs (\`CNI_COMMAND=VERSION /bin/true\`, each a call both tracers follow).`,
    '',
    '| daemon mode | bpftrace | memory (RSS) | CPU, idle minute | CPU, burst |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    'The standby attaches only the sched tracepoints (exec, fork, exit), as light mode does: no syscall tracepoint, so',
    'it adds nothing to the cost of read/write on the node (bench/results/overhead.md: light mode is within noise on',
    'exec, dd and redis). Its exec probe scans every exec\'s environment like the main tracer\'s does.',
    '',
  ].join('\n'),
);
console.log(readFileSync(path.join(RESULTS, 'standby-tracer.md'), 'utf8'));
