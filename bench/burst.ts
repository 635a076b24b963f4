/**
 * Burst benchmark: 200 concurrent real plugin calls (host-local ADD, 16 KiB
 * config each) against the real daemon in each capture mode; reports how
 * many were recorded complete and byte-exact, lost tracer records, and how
 * long the daemon took to store them all. A third run repeats full mode
 * with OpenTelemetry export on (to a local OTLP receiver): recording must
 * stay as complete and byte-exact, and every call must arrive once. A
 * fourth is 300 concurrent calls with distinct 8 KiB configs in full mode
 * (the target: every one recorded complete and byte-exact, nothing lost).
 *
 *   sudo npm run build && sudo node dist/bench/burst.js [--only-300]
 *
 * Writes bench/results/burst.json and bench/results/burst.md.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir } from 'node:os';
import path from 'node:path';
import { runPlugin } from '../cli/plugin-runner.js';
import { createCallStore, openDatabase } from '../store/index.js';
import { startBenchDaemon } from './lib/daemon-process.js';
import { startOtlpReceiver, type OtlpReceiver } from './lib/otlp-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** How many calls at once, with how big a config each. */
interface BurstShape {
  calls: number;
  configBytes: number;
}

const WIDE: BurstShape = { calls: 200, configBytes: 16 * 1024 };
const MANY: BurstShape = { calls: 300, configBytes: 8 * 1024 };

interface BurstResult {
  mode: 'full' | 'light';
  configBytes: number;
  /** OpenTelemetry export on: the calls as the receiver got them. */
  otlp: { spans: number; callsExportedOnce: number; exportedAfterSeconds: number } | null;
  calls: number;
  recordedComplete: number;
  byteExact: number;
  lostEvents: number;
  execSeconds: number;
  storedAfterSeconds: number;
}

async function burst(mode: 'full' | 'light', dir: string, shape: BurstShape, receiver: OtlpReceiver | null = null): Promise<BurstResult> {
  const { calls: CALLS, configBytes: CONFIG_BYTES } = shape;
  const daemon = await startBenchDaemon({
    db: path.join(dir, `${mode}-${CALLS}${receiver ? '-otlp' : ''}.db`),
    capture: mode,
    extraArgs: receiver ? ['--otlp-endpoint', receiver.url] : [],
  });
  const dataDir = mkdtempSync(path.join(dir, 'ipam-'));
  const prefix = `bench-${mode}-${Date.now().toString(36)}`;
  const configs = Array.from({ length: CALLS }, (_, i) => {
    const conf = { cniVersion: '1.0.0', name: 'burst', ipam: { type: 'host-local', dataDir, ranges: [[{ subnet: '10.252.0.0/16' }]] }, note: '' };
    const pad = CONFIG_BYTES - Buffer.byteLength(JSON.stringify(conf)) - String(i).length - 1;
    return Buffer.from(JSON.stringify({ ...conf, note: `${i}-${'n'.repeat(pad)}` }));
  });
  const t0 = Date.now();
  const results = await Promise.all(
    configs.map((stdin, i) =>
      runPlugin({ plugin: '/usr/lib/cni/host-local', command: 'ADD', containerId: `${prefix}-${i}`, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: '/usr/lib/cni', stdin }),
    ),
  );
  const execSeconds = (Date.now() - t0) / 1000;
  const store = createCallStore(openDatabase(daemon.db));
  let recordedComplete = 0;
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    recordedComplete = store.listCalls({ containerId: undefined, status: 'finished', sinceUs: t0 * 1000 - 1_000_000 }, 1000).items.filter((c) => c.containerId?.startsWith(prefix)).length;
    if (recordedComplete >= CALLS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const storedAfterSeconds = (Date.now() - t0) / 1000;
  let byteExact = 0;
  for (let i = 0; i < CALLS; i++) {
    const [summary] = store.listCalls({ containerId: `${prefix}-${i}` }, 1).items;
    const call = summary ? store.getCall(summary.id) : null;
    const stdinOk = mode === 'light' || call?.stdin.bytes.equals(configs[i]!);
    const stdoutOk = mode === 'light' || call?.stdout.bytes.equals(results[i]!.stdout);
    if (call && call.exitCode === results[i]!.exitCode && stdinOk && stdoutOk) byteExact++;
  }
  const otlp = receiver ? await exported(receiver, prefix, t0, CALLS) : null;
  const health = (await (await fetch(`${daemon.url}/healthz`)).json()) as { tracer: { lostEvents: number } };
  store.close();
  await daemon.stop();
  return { mode, configBytes: CONFIG_BYTES, otlp, calls: CALLS, recordedComplete, byteExact, lostEvents: health.tracer.lostEvents, execSeconds, storedAfterSeconds };
}

/** Waits (up to 60 s) for a span per call of the burst; counts the calls that arrived exactly once. */
async function exported(receiver: OtlpReceiver, prefix: string, t0: number, CALLS: number): Promise<NonNullable<BurstResult['otlp']>> {
  const ours = () => receiver.spans.filter((s) => String(s.attributes['container.id'] ?? '').startsWith(prefix) && s.name.startsWith('CNI '));
  const until = Date.now() + 60_000;
  while (ours().length < CALLS && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  const exportedAfterSeconds = (Date.now() - t0) / 1000;
  const perCall = new Map<string, number>();
  for (const s of ours()) perCall.set(String(s.attributes['cni.call.id']), (perCall.get(String(s.attributes['cni.call.id'])) ?? 0) + 1);
  return { spans: ours().length, callsExportedOnce: [...perCall.values()].filter((n) => n === 1).length, exportedAfterSeconds };
}

function hostDescription(): string {
  return `${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), Linux ${release()}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-burst-'));
  try {
    if (process.argv[2] === '--only-300') {
      // While working on the tracer: the hardest row alone, printed, no results written.
      console.log(JSON.stringify(await burst('full', dir, MANY)));
      return;
    }
    const receiver = await startOtlpReceiver();
    const runs = [await burst('full', dir, WIDE), await burst('light', dir, WIDE), await burst('full', dir, WIDE, receiver), await burst('full', dir, MANY)];
    await receiver.close();
    for (const r of runs) console.log(JSON.stringify(r));
    const results = path.join(ROOT, 'bench/results');
    mkdirSync(results, { recursive: true });
    writeFileSync(path.join(results, 'burst.json'), `${JSON.stringify({ date: new Date().toISOString(), host: hostDescription(), runs }, null, 2)}\n`);
    writeFileSync(
      path.join(results, 'burst.md'),
      [
        '# Burst benchmark',
        '',
        `${new Date().toISOString()} on ${hostDescription()}: concurrent host-local ADD calls with distinct configs, real daemon and bpftrace, one tracer.`,
        '',
        '| calls × config | mode | recorded complete | byte-exact (stdin+stdout+exit) | lost tracer records | calls ran in | all stored after | OTLP export: calls received once | all received after |',
        '|---|---|---|---|---|---|---|---|---|',
        ...runs.map(
          (r) =>
            `| ${r.calls} × ${r.configBytes / 1024} KiB | ${r.mode}${r.otlp ? ' + OTLP export' : ''} | ${r.recordedComplete}/${r.calls} | ${r.byteExact}/${r.calls} | ${r.lostEvents} | ${r.execSeconds.toFixed(2)} s | ${r.storedAfterSeconds.toFixed(2)} s | ` +
            (r.otlp ? `${r.otlp.callsExportedOnce}/${r.calls} | ${r.otlp.exportedAfterSeconds.toFixed(2)} s |` : '(off) | |'),
        ),
        '',
        'With export on, the daemon sends each call as a span and a log record (payloads capped at 4 KiB) to an OTLP/HTTP',
        'receiver in the benchmark process, which decodes them with the official .proto definitions.',
        '',
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
