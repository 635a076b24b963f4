/**
 * Starts the real daemon (the built CLI, real bpftrace) for a benchmark:
 * its own database, a free port, extra flags passed through, and resolves
 * once the tracer records. The benchmarks' one way to run the daemon.
 */

import { spawn } from 'node:child_process';
import path from 'node:path';
import { killTree } from './proc-tree.js';

// bench/lib/ (under a TypeScript runner) or dist/bench/lib/ (built): the repository root is two or three up.
const ROOT = path.resolve(import.meta.dirname, import.meta.dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..');
/** Output kept for logs(): enough for any start-up failure, bounded over a long run at info level. */
const MAX_LOG_CHARS = 1_000_000;

export interface BenchDaemon {
  readonly url: string;
  readonly db: string;
  /** The node daemon's own pid (a `prefix` command execs it, so the pid stays the daemon's). */
  readonly pid: number;
  /** bpftrace's pid when the daemon became ready (a tracer restart would change it). */
  readonly tracerPid: number;
  logs(): string;
  /**
   * SIGTERM, and resolves when it has exited; with `graceMs`, the daemon and
   * everything under it are killed if it has not exited by then.
   */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL to the daemon and everything under it (bpftrace), now: for a benchmark's emergency exit. */
  kill(): void;
}

export interface BenchDaemonOptions {
  readonly db: string;
  readonly capture?: 'full' | 'light' | 'auto';
  /** Passed through as they are, after the benchmark's own flags (so they win). */
  readonly extraArgs?: readonly string[];
  /** A command the daemon runs under, e.g. `nice -n -20`; it must exec the daemon (see `pid`). */
  readonly prefix?: readonly string[];
  /** Node's own flags, e.g. the heap flags bin/cnirec.js's shebang gives an operator's daemon. */
  readonly nodeFlags?: readonly string[];
  readonly readyTimeoutMs?: number;
}

interface ReadyHealth {
  tracer: { ready: boolean; pid: number | null };
}

export async function startBenchDaemon(opts: BenchDaemonOptions): Promise<BenchDaemon> {
  const args = [path.join(ROOT, 'bin/cnirec.js'), 'run', '--db', opts.db, '--listen', '127.0.0.1:0', '--capture', opts.capture ?? 'full', ...(opts.extraArgs ?? [])];
  const argv = [...(opts.prefix ?? []), process.execPath, ...(opts.nodeFlags ?? []), ...args];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (b: Buffer) => {
    if (out.length < MAX_LOG_CHARS) out += b.toString();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  for (;;) {
    const url = /"url":"(http:[^"]+)"/.exec(out)?.[1];
    if (url) {
      // A daemon that dies right after listening refuses the connection: the exit check below says so.
      const health = await fetch(`${url}/healthz`)
        .then(async (res) => (await res.json()) as ReadyHealth)
        .catch(() => null);
      if (health?.tracer.ready && health.tracer.pid !== null) {
        return {
          url,
          db: opts.db,
          pid: child.pid!,
          tracerPid: health.tracer.pid,
          logs: () => out,
          async stop(graceMs) {
            if (running()) child.kill('SIGTERM');
            if (graceMs === undefined) return exited;
            let timer: NodeJS.Timeout | undefined;
            const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
            if ((await Promise.race([exited, late])) === 'late') {
              killTree(child);
              await exited;
            }
            clearTimeout(timer);
          },
          kill: () => killTree(child),
        };
      }
    }
    if (Date.now() > deadline || !running()) {
      killTree(child);
      throw new Error(`the daemon did not start (${args.slice(1).join(' ')}):\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
