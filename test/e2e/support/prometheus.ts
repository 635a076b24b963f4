/**
 * A real Prometheus (Debian's prometheus package) for the alerts e2e: its own config, a private data dir
 * and a free port, scraping given targets every second and evaluating given rules every second.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';

export const PROMETHEUS = process.env.CNIREC_PROMETHEUS ?? '/usr/bin/prometheus';

export function prometheusProblem(): string | null {
  return existsSync(PROMETHEUS) ? null : `no Prometheus at ${PROMETHEUS}: apt-get install prometheus (scripts/test.sh does), or set CNIREC_PROMETHEUS`;
}

export interface Alert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

export interface RunningPrometheus {
  readonly url: string;
  /** The value of an instant query's first sample, or null when it has none. */
  scalar(query: string): Promise<number | null>;
  alerts(): Promise<Alert[]>;
  logs(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export async function startPrometheus(opts: { targets: readonly string[]; labels?: Record<string, string>; rules: object }): Promise<RunningPrometheus> {
  const problem = prometheusProblem();
  if (problem) throw new Error(problem);
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-prometheus-'));
  writeFileSync(path.join(dir, 'rules.yaml'), YAML.stringify(opts.rules));
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    YAML.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [path.join(dir, 'rules.yaml')],
      scrape_configs: [{ job_name: 'cnirec', static_configs: [{ targets: opts.targets, labels: opts.labels ?? {} }] }],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS,
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Prometheus did not start:\n${output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const api = async <T>(route: string): Promise<T> => {
    const res = await fetch(`${url}${route}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${route}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    async scalar(query) {
      const data = await api<{ result: { value: [number, string] }[] }>(`/api/v1/query?query=${encodeURIComponent(query)}`);
      const v = data.result[0]?.value[1];
      return v === undefined ? null : Number(v);
    },
    alerts: async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts,
    logs: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
