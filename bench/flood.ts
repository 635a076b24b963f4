/**
 * Flood soak: a trivial plugin exec'd as fast as this machine can (several
 * parallel loops) against the real daemon and bpftrace; reports calls made
 * and recorded, lost tracer records, peak daemon RSS, database size, and
 * the longest write stall.
 *
 *   npm run build && flock /tmp/cnirec-bench.lock flock /tmp/cnirec-e2e.lock \
 *     node dist/bench/flood.js [--seconds 30] [--loops 4] [--capture full|light] [--rate N] [--stdin-bytes N] [--daemon-arg=--flag --daemon-arg=value …]
 *
 * `--rate N` paces the loops to N calls a second in all (default: as fast as they go); `--stdin-bytes N`
 * gives each call an N-byte config on stdin, read and echoed by the plugin (default: none, trivial.sh).
 *
 * `--daemon-arg=X` passes X to `cnirec run` as is (repeat it for a flag and
 * its value, e.g. `--daemon-arg=--perf-buffer-pages --daemon-arg=64`).
 * Writes bench/results/flood.json and bench/results/flood.md (`--out DIR` elsewhere).
 */

import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { startBenchDaemon } from './lib/daemon-process.js';
import { flood, rssBytes } from './flood-load.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface Health {
  tracer: { lostEvents: number; gaps: number };
  calls: { openCalls: number };
  store: { pendingWrites: number; droppedWrites: number; databaseBytes: number };
  retention?: { maxDbBytes: number; deletedTotal: { calls: number } } | null;
}

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '30' },
    loops: { type: 'string', default: '4' },
    capture: { type: 'string', default: 'full' },
    rate: { type: 'string' },
    'stdin-bytes': { type: 'string', default: '0' },
    'daemon-arg': { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: path.join(ROOT, 'bench/results') },
  },
  strict: true,
});
const seconds = Number(values.seconds);
const loops = Number(values.loops);
const capture = values.capture === 'light' ? 'light' : 'full';
const daemonArgs = values['daemon-arg'];
/** Calls a second across all loops, paced (default: as fast as they go). */
const rate = values.rate === undefined ? undefined : Number(values.rate);
const stdinBytes = Number(values['stdin-bytes']);

const getHealth = async (url: string) => (await (await fetch(`${url}/healthz`)).json()) as Health;

/** A gauge or counter without labels from Prometheus text; null when the daemon has no such metric. */
function metric(text: string, name: string): number | null {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

function fileBytes(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function countCalls(db: string, prefix: string): Record<string, number> {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    const rows = conn.prepare('SELECT status, count(*) AS n FROM calls WHERE container_id LIKE ? GROUP BY status').all(`${prefix}-%`) as Array<{ status: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    conn.close();
  }
}

/**
 * A config of `bytes` bytes and a plugin that reads it: `cat` under a plugin's name, which takes its stdin
 * in one read and echoes it (so stdout carries as many bytes). The trivial plugin reads nothing.
 */
function stdinPayload(dir: string, bytes: number): { file: string; plugin: string; bytes: Buffer } {
  const head = '{"cniVersion":"1.0.0","name":"flood","type":"echo-config","pad":"';
  const body = Buffer.from(`${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}"}`.slice(0, bytes));
  const file = path.join(dir, 'config.json');
  writeFileSync(file, body);
  mkdirSync(path.join(dir, 'plugins'));
  const plugin = path.join(dir, 'plugins', 'echo-config');
  symlinkSync('/bin/cat', plugin);
  return { file, plugin, bytes: body };
}

function countExactStdin(db: string, prefix: string, bytes: Buffer): number {
  const conn = new BetterSqlite3(db, { readonly: true });
  try {
    return (conn.prepare('SELECT count(*) AS n FROM calls WHERE container_id LIKE ? AND stdin = ?').get(`${prefix}-%`, bytes) as { n: number }).n;
  } finally {
    conn.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-flood-'));
  const loadBefore = loadavg();
  const daemon = await startBenchDaemon({ db: path.join(dir, 'flood.db'), capture, extraArgs: ['--cni-cache-dirs', '', '--host-local-dirs', '', ...daemonArgs] });
  try {
    const idleRssBytes = rssBytes(daemon.pid);
    const prefix = `flood${Date.now().toString(36)}`;
    const payload = stdinBytes > 0 ? stdinPayload(dir, stdinBytes) : null;
    const load = await flood({ seconds, loops, prefix, daemonPid: daemon.pid, url: daemon.url, rate, plugin: payload?.plugin, stdinFile: payload?.file });
    const loadDuring = loadavg();

    // Let it catch up: nothing open, nothing waiting, the count steady for a second.
    const caughtUpStart = Date.now();
    let last = -1;
    let counts: Record<string, number> = {};
    for (;;) {
      const h = await getHealth(daemon.url);
      counts = countCalls(daemon.db, prefix);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      if ((h.calls.openCalls === 0 && h.store.pendingWrites === 0 && total === last) || Date.now() - caughtUpStart > 60_000) break;
      last = total;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const caughtUpSeconds = (Date.now() - caughtUpStart) / 1000;
    const health = await getHealth(daemon.url);
    const metricsText = await (await fetch(`${daemon.url}/metrics`)).text();
    const writeStallMax = metric(metricsText, 'cnirec_store_write_stall_max_seconds');
    const recorded = Object.values(counts).reduce((a, b) => a + b, 0);
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, loadavgBefore: loadBefore, loadavgAtFloodEnd: loadDuring },
      settings: { seconds, loops, capture, daemonArgs, rate: rate ?? null, stdinBytes },
      // Calls whose stored stdin is the very bytes sent (0 when none are sent).
      stdinExact: payload ? countExactStdin(daemon.db, prefix, payload.bytes) : 0,
      callsMade: load.callsMade,
      callsPerSecond: Math.round(load.callsPerSecond),
      callsRecorded: recorded,
      recordedByStatus: counts,
      // Rows retention deleted while the flood ran: recorded, then dropped to hold the size limit.
      callsDeletedByRetention: health.retention?.deletedTotal.calls ?? 0,
      retentionMaxDbBytes: health.retention?.maxDbBytes ?? 0,
      lostEvents: health.tracer.lostEvents,
      droppedWrites: health.store.droppedWrites,
      tracerGaps: health.tracer.gaps,
      idleRssBytes,
      peakRssBytes: load.peakRssBytes,
      rssSamples: load.rss,
      dbBytes: fileBytes(daemon.db),
      walBytes: fileBytes(`${daemon.db}-wal`),
      longestWriteStallSeconds: writeStallMax,
      longestApiStallMs: load.longestApiStallMs,
      caughtUpSeconds,
    };
    const { rssSamples: _samples, ...summary } = result;
    console.log(JSON.stringify(summary, null, 2));
    mkdirSync(values.out, { recursive: true });
    writeFileSync(path.join(values.out, 'flood.json'), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(path.join(values.out, 'flood.md'), markdown(result));
  } finally {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(r: {
  date: string;
  machine: { cpus: number; loadavgBefore: number[]; loadavgAtFloodEnd: number[] };
  settings: { seconds: number; loops: number; capture: string; daemonArgs: string[]; rate: number | null; stdinBytes: number };
  stdinExact: number;
  callsMade: number;
  callsPerSecond: number;
  callsRecorded: number;
  recordedByStatus: Record<string, number>;
  callsDeletedByRetention: number;
  retentionMaxDbBytes: number;
  lostEvents: number;
  droppedWrites: number;
  tracerGaps: number;
  idleRssBytes: number;
  peakRssBytes: number;
  dbBytes: number;
  walBytes: number;
  longestWriteStallSeconds: number | null;
  longestApiStallMs: number;
  caughtUpSeconds: number;
}): string {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  const stored = r.callsRecorded + r.callsDeletedByRetention;
  const pct = r.callsMade > 0 ? ((100 * stored) / r.callsMade).toFixed(1) : '0';
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  return [
    '# Flood soak',
    '',
    `${r.date}: ${r.settings.stdinBytes > 0 ? `a plugin reading ${r.settings.stdinBytes} B of config on stdin and echoing it (\`cat\`)` : 'a trivial plugin (`test/e2e/fixtures/plugins/trivial.sh`)'} exec'd by ${r.settings.loops} parallel shell loops for ${r.settings.seconds} s${r.settings.rate ? `, paced at ${r.settings.rate} calls/s in all` : ''}, ` +
      `real daemon (\`--capture ${r.settings.capture}\`${r.settings.daemonArgs.length ? ` ${r.settings.daemonArgs.join(' ')}` : ''}) and bpftrace.`,
    `${r.machine.cpus} CPUs, shared; load average (1/5/15 min) ${load(r.machine.loadavgBefore)} before, ${load(r.machine.loadavgAtFloodEnd)} at the end of the flood.`,
    '',
    '| | |',
    '|---|---|',
    `| calls made | ${r.callsMade} (${r.callsPerSecond}/s) |`,
    `| calls recorded | ${stored} (${pct}%), of which ${r.callsDeletedByRetention} already deleted by retention; in the database now: ${Object.entries(r.recordedByStatus).map(([s, n]) => `${s} ${n}`).join(', ')} |`,
    `| lost tracer records (on /healthz and /metrics) | ${r.lostEvents} |`,
    ...(r.settings.stdinBytes > 0 ? [`| calls stored with their stdin byte-exact | ${r.stdinExact} |`] : []),
    `| writes dropped by the store | ${r.droppedWrites} |`,
    `| tracer gaps | ${r.tracerGaps} |`,
    `| daemon RSS idle → peak | ${mib(r.idleRssBytes)} → ${mib(r.peakRssBytes)} |`,
    `| database size (file + WAL) | ${mib(r.dbBytes)} + ${mib(r.walBytes)} (retention limit: ${r.retentionMaxDbBytes > 0 ? mib(r.retentionMaxDbBytes) : 'none'}) |`,
    `| longest write stall (\`cnirec_store_write_stall_max_seconds\`) | ${r.longestWriteStallSeconds === null ? 'n/a (the daemon has no such metric)' : `${(r.longestWriteStallSeconds * 1000).toFixed(0)} ms`} |`,
    `| longest /healthz answer while flooding (event loop stall, writes included) | ${r.longestApiStallMs} ms |`,
    `| caught up after the flood in | ${r.caughtUpSeconds.toFixed(1)} s |`,
    '',
    'Calls not recorded are those whose exec records bpftrace lost (perf buffer overrun): the loss is counted,',
    'never silent. A call whose exit record was lost is stored as `incomplete`.',
    '',
  ].join('\n');
}

await main();
