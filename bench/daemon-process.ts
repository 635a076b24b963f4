/**
 * Starts the real daemon (the built CLI, real bpftrace) for a benchmark:
 * its own database, a free port, extra flags passed through, and resolves
 * once the tracer records. The benchmarks' one way to run the daemon.
 */

import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, import.meta.dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

export interface BenchDaemon {
  readonly url: string;
  readonly db: string;
  readonly pid: number;
  logs(): string;
  /** SIGTERM, and resolves when it has exited. */
  stop(): Promise<void>;
}

export interface BenchDaemonOptions {
  readonly db: string;
  readonly capture?: 'full' | 'light';
  /** Passed through as they are, after the benchmark's own flags (so they win). */
  readonly extraArgs?: readonly string[];
  readonly readyTimeoutMs?: number;
}

export async function startBenchDaemon(opts: BenchDaemonOptions): Promise<BenchDaemon> {
  const args = [path.join(ROOT, 'bin/cnirec.js'), 'run', '--db', opts.db, '--listen', '127.0.0.1:0', '--capture', opts.capture ?? 'full', ...(opts.extraArgs ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  for (;;) {
    const url = /"url":"(http:[^"]+)"/.exec(out)?.[1];
    if (url) {
      const health = (await (await fetch(`${url}/healthz`)).json()) as { tracer: { ready: boolean } };
      if (health.tracer.ready) {
        return {
          url,
          db: opts.db,
          pid: child.pid!,
          logs: () => out,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        };
      }
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the daemon did not start (${args.slice(1).join(' ')}):\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
