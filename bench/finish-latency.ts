/**
 * Finish latency: how long after a plugin exits a client sees its call
 * finished. For N VERSION calls and N ADD calls of real plugins (host-local,
 * no network needed), one at a time so nothing else is outstanding, against
 * the real daemon and bpftrace in light and in full mode, it measures from
 * the plugin's exit as recorded (the call's endedAt) to
 *   (a) the REST API listing the call as no longer running (polled every
 *       POLL_MS from the moment the plugin's pipes closed), and
 *   (b) the live tail's `call.finished` message arriving on a websocket.
 *
 *   sudo npm run build && sudo node dist/bench/finish-latency.js [--calls N]
 *
 * Writes bench/results/finish-latency.json and bench/results/finish-latency.md
 * (with the commit measured).
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { runPlugin } from '../cli/plugin-runner.js';
import { startBenchDaemon } from './lib/daemon-process.js';

const ROOT = path.resolve(import.meta.dirname, import.meta.dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
const PLUGIN = '/usr/lib/cni/host-local';
/** How often the API is asked while a call is not finished yet: the resolution of (a). */
const POLL_MS = 5;
/** Between calls: the previous call's late records and publication are over, so each call is alone. */
const GAP_MS = 300;
/** A call not finished in the API or on the tail by then is reported as such, not waited for. */
const GIVE_UP_MS = 20_000;

type Mode = 'light' | 'full';
type Command = 'VERSION' | 'ADD';

interface Sample {
  readonly callId: string;
  /** The plugin's exit as recorded (endedAt), ms since the epoch. */
  readonly exitMs: number;
  /** endedAt → the benchmark saw the plugin's pipes close (how far the recorded exit is from this clock). */
  readonly pipesClosedMs: number;
  /** endedAt → the API listed it finished; null: not within GIVE_UP_MS. */
  readonly apiMs: number | null;
  /** endedAt → the tail's call.finished arrived; null: not within GIVE_UP_MS. */
  readonly tailMs: number | null;
}

interface Row {
  readonly mode: Mode;
  readonly command: Command;
  readonly samples: readonly Sample[];
  readonly api: Percentiles | null;
  readonly tail: Percentiles | null;
  readonly missing: { readonly api: number; readonly tail: number };
}

interface Percentiles {
  readonly n: number;
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
}

/** Nearest-rank percentiles, ms to 0.1. */
function percentiles(values: readonly number[]): Percentiles | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number) => Math.round(s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]! * 10) / 10;
  return { n: s.length, p50: at(50), p95: at(95), max: at(100) };
}

interface SummaryRow {
  id: string;
  status: string;
  endedAt: string | null;
}

/** Tail arrival times of call.finished by call id, and waiters for those not arrived yet. */
function tailClock(url: string): Promise<{ finishedAt: (id: string, timeoutMs: number) => Promise<number | null>; close: () => void }> {
  const arrived = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/api/v1/tail?includeVersion=true`);
  ws.on('message', (data: Buffer) => {
    const at = Date.now();
    const m = JSON.parse(data.toString('utf8')) as { type: string; call?: { id: string } };
    if (m.type !== 'call.finished' || !m.call) return;
    arrived.set(m.call.id, at);
    waiting.get(m.call.id)?.(at);
  });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        finishedAt: (id, timeoutMs) => {
          const seen = arrived.get(id);
          if (seen !== undefined) return Promise.resolve(seen);
          return new Promise((done) => {
            const timer = setTimeout(() => done(null), timeoutMs);
            waiting.set(id, (at) => {
              clearTimeout(timer);
              done(at);
            });
          });
        },
        close: () => ws.close(),
      }),
    );
  });
}

async function listFor(url: string, containerId: string): Promise<SummaryRow | null> {
  const res = await fetch(`${url}/api/v1/calls?containerId=${encodeURIComponent(containerId)}&includeVersion=true&limit=1`);
  const body = (await res.json()) as { items: SummaryRow[] };
  return body.items[0] ?? null;
}

async function measure(mode: Mode, dir: string, calls: number): Promise<Row[]> {
  const daemon = await startBenchDaemon({ db: path.join(dir, `${mode}.db`), capture: mode });
  const tail = await tailClock(daemon.url);
  const dataDir = mkdtempSync(path.join(dir, 'ipam-'));
  const prefix = `fl-${mode}-${Date.now().toString(36)}`;
  const rows: Row[] = [];
  try {
    // Let the start-up's own work (conf dir scan, first health) settle.
    await new Promise((r) => setTimeout(r, 2_000));
    for (const command of ['VERSION', 'ADD'] as const) {
      const samples: Sample[] = [];
      for (let i = 0; i < calls; i++) {
        const containerId = `${prefix}-${command.toLowerCase()}-${i}`;
        const stdin = JSON.stringify({ cniVersion: '1.0.0', name: 'finish-latency', ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.251.0.0/16' }]] } });
        const res = await runPlugin({ plugin: PLUGIN, command, containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: '/usr/lib/cni', stdin });
        const closedAt = Date.now();
        if (res.exitCode !== 0) throw new Error(`${command} ${PLUGIN} exited ${res.exitCode}: ${res.stderr.toString()}`);
        // (a) the API, polled from the moment the caller had the result.
        let row: SummaryRow | null = null;
        let apiAt: number | null = null;
        while (Date.now() - closedAt < GIVE_UP_MS) {
          row = await listFor(daemon.url, containerId);
          if (row && row.status !== 'running') {
            apiAt = Date.now();
            break;
          }
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
        if (!row || row.endedAt === null) throw new Error(`${command} call ${containerId} was not recorded finished within ${GIVE_UP_MS} ms`);
        const exitMs = Date.parse(row.endedAt);
        // (b) the tail: its arrival was stamped when it came, whenever that was.
        const tailAt = await tail.finishedAt(row.id, GIVE_UP_MS);
        samples.push({
          callId: row.id,
          exitMs,
          pipesClosedMs: closedAt - exitMs,
          apiMs: apiAt === null ? null : apiAt - exitMs,
          tailMs: tailAt === null ? null : tailAt - exitMs,
        });
        await new Promise((r) => setTimeout(r, GAP_MS));
      }
      const api = samples.flatMap((s) => (s.apiMs === null ? [] : [s.apiMs]));
      const tailMs = samples.flatMap((s) => (s.tailMs === null ? [] : [s.tailMs]));
      rows.push({ mode, command, samples, api: percentiles(api), tail: percentiles(tailMs), missing: { api: samples.length - api.length, tail: samples.length - tailMs.length } });
      console.log(JSON.stringify({ mode, command, api: percentiles(api), tail: percentiles(tailMs) }));
    }
  } finally {
    tail.close();
    await daemon.stop(10_000);
  }
  return rows;
}

function commitMeasured(): string {
  try {
    const sha = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return `${sha}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

const host = () => `${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Linux ${release()}`;
const ms = (p: Percentiles | null, key: 'p50' | 'p95' | 'max') => (p === null ? '-' : `${p[key].toFixed(1)} ms`);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { calls: { type: 'string', default: '20' } } });
  const calls = Number(values.calls);
  if (!Number.isInteger(calls) || calls < 1) throw new Error(`--calls must be a positive integer, got ${values.calls}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-finish-'));
  const load = loadavg()[0]!.toFixed(2);
  const commit = commitMeasured();
  try {
    const rows = [...(await measure('light', dir, calls)), ...(await measure('full', dir, calls))];
    const date = new Date().toISOString();
    const results = path.join(ROOT, 'bench/results');
    mkdirSync(results, { recursive: true });
    writeFileSync(path.join(results, 'finish-latency.json'), `${JSON.stringify({ date, host: host(), commit, loadAverage1m: Number(load), calls, pollMs: POLL_MS, rows }, null, 2)}\n`);
    writeFileSync(
      path.join(results, 'finish-latency.md'),
      [
        '# Finish latency',
        '',
        `${date} on ${host()}, load average ${load} at the start; commit ${commit}.`,
        `${calls} calls per row, one at a time (${GAP_MS} ms apart), of \`${PLUGIN}\` against the real daemon and bpftrace.`,
        `From the plugin's exit as recorded (the call's \`endedAt\`) to (a) \`GET /api/v1/calls\` listing it no longer running`,
        `(polled every ${POLL_MS} ms from when the caller had the result) and (b) the tail's \`call.finished\` arriving on a websocket.`,
        '',
        '| mode | command | API p50 | API p95 | API max | tail p50 | tail p95 | tail max | not finished within 20 s (API / tail) |',
        '|---|---|---|---|---|---|---|---|---|',
        ...rows.map((r) => `| ${r.mode} | ${r.command} | ${ms(r.api, 'p50')} | ${ms(r.api, 'p95')} | ${ms(r.api, 'max')} | ${ms(r.tail, 'p50')} | ${ms(r.tail, 'p95')} | ${ms(r.tail, 'max')} | ${r.missing.api} / ${r.missing.tail} |`),
        '',
        'The benchmark and the daemon share the clock; `endedAt` is bpftrace\'s monotonic exit time turned into wall time by',
        'the daemon, so a few ms of that conversion may show in the numbers. Every sample is in the JSON file.',
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
