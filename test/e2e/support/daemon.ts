/**
 * Runs the real cnirec daemon (the built CLI, real bpftrace) for end-to-end
 * tests, with its own database and a free port, and reads what it stored.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCallStore, openDatabase, type CallStore, type StoredCall, type StoredCallSummary } from '../../../store/index.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CLI = path.join(ROOT, 'bin/cnirec.js');

export interface RunningDaemon {
  readonly url: string;
  readonly dbPath: string;
  readonly process: ChildProcess;
  /** A second connection to the daemon's database (WAL: reads while it writes). */
  readonly store: CallStore;
  /** Polls the store until `find` returns something, or fails after `timeoutMs` with what was there. */
  waitFor<T>(what: string, find: (store: CallStore) => T | null | undefined | false, timeoutMs?: number): Promise<T>;
  /** Finished (or incomplete) calls for a container id, oldest first, in full. */
  callsFor(containerId: string, opts?: { includeVersion?: boolean }): StoredCall[];
  logs(): string;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface DaemonOptions {
  readonly capture?: 'auto' | 'full' | 'light';
  readonly extraArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** An existing database to run on (a restart); it is kept when the daemon stops. */
  readonly dbPath?: string;
}

/**
 * The e2e suite needs root and bpftrace. Under CI a missing privilege is a
 * failure; locally the suite says why it does not run.
 */
export function privilegedSuiteProblem(): string | null {
  if (process.getuid?.() !== 0) return 'the end-to-end suite needs root (bpftrace, network namespaces, podman): run it with sudo';
  if (!existsSync(path.join(ROOT, 'dist/cli/main.js'))) return 'dist/ is missing: run `npm run build` (npm test does) before the end-to-end suite';
  return null;
}

export async function startDaemon(opts: DaemonOptions = {}): Promise<RunningDaemon> {
  const problem = privilegedSuiteProblem();
  if (problem) throw new Error(problem);
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-e2e-daemon-'));
  const dbPath = opts.dbPath ?? path.join(dir, 'db', 'cnirec.db');
  const child = spawn(
    process.execPath,
    [CLI, 'run', '--db', dbPath, '--listen', '127.0.0.1:0', '--capture', opts.capture ?? 'full', '--log-level', 'info', ...(opts.extraArgs ?? [])],
    // The node's own runtime (a packaged containerd) is not asked unless a test says so (--cri-endpoint wins).
    { env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', CNIREC_CRI_ENDPOINT: 'none', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString('utf8')));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const url = await waitUntil('the daemon to listen', 30_000, () => /"url":"(http:[^"]+)"/.exec(output)?.[1], () => output, exited);
  await waitUntil(
    'the tracer to record',
    90_000,
    async () => {
      const res = await fetch(`${url}/healthz`).catch(() => null);
      const health = res ? ((await res.json()) as { tracer: { ready: boolean } }) : null;
      return health?.tracer.ready ? true : null;
    },
    () => output,
    exited,
  );
  const store = createCallStore(openDatabase(dbPath));

  const daemon: RunningDaemon = {
    url,
    dbPath,
    process: child,
    store,
    waitFor: (what, find, timeoutMs = 15_000) => waitUntil(what, timeoutMs, () => find(store) || null, () => output, exited),
    callsFor(containerId, o = {}) {
      const page = store.listCalls({ containerId, includeVersion: o.includeVersion ?? false }, 1000);
      return page.items
        .filter((c: StoredCallSummary) => c.status !== 'running')
        .reverse()
        .map((c) => store.getCall(c.id)!)
        .filter(Boolean);
    },
    logs: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const res = await exited;
      store.close();
      rmSync(dir, { recursive: true, force: true });
      return res;
    },
  };
  return daemon;
}

async function waitUntil<T>(
  what: string,
  timeoutMs: number,
  probe: () => T | null | undefined | Promise<T | null | undefined>,
  logs: () => string,
  exited: Promise<unknown>,
): Promise<T> {
  let dead = false;
  void exited.then(() => (dead = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null && value !== undefined) return value;
    if (dead) throw new Error(`the daemon exited while waiting for ${what}:\n${logs().slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${logs().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
