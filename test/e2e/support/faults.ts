/**
 * Shared by the fault tests (test/e2e/faults-*.test.ts): reading the
 * daemon's API and metrics, waiting for a condition, and making plugin calls
 * whose bytes the test knows.
 */

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { execPlugin, type ExecPluginResult } from './plugin-driver.js';

export const FIXTURE_PLUGINS = path.resolve(import.meta.dirname, '../fixtures/plugins');
export const ECHO = path.join(FIXTURE_PLUGINS, 'echo.sh');
export const SLEEPER = path.join(FIXTURE_PLUGINS, 'sleeper.sh');

export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** Polls `probe` until it returns something truthy; fails after `timeoutMs` with `context()`. */
export async function poll<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 20_000, context: () => string = () => '', everyMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${context().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The value of an unlabelled metric in Prometheus text, or null when absent. */
export function metric(text: string, name: string): number | null {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

export async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

export interface Health {
  status: 'ok' | 'degraded';
  problems: string[];
  tracer: {
    running: boolean;
    ready: boolean;
    mode: 'full' | 'light';
    pid: number | null;
    restarts: number;
    lostEvents: number;
    gaps: number;
    gapSeconds: number;
    lastGap: { startedAt: string; endedAt: string | null; reason: string; incompleteCalls: number } | null;
    standby: { running: boolean; ready: boolean; pid: number | null; restarts: number; rssBytes: number | null; cpuSeconds: number | null } | null;
  };
  calls: { openCalls: number; callsStarted: number; callsFinished: number; oldestRunningAgeMs: number | null; callsMarked?: Record<string, number> };
  store: { writable: boolean; lastError: string | null; failingSince: string | null; pendingWrites: number; droppedWrites: number; databaseBytes: number };
}

export const health = (url: string) => getJson<Health>(`${url}/healthz`);

/** A CNI ADD through the echo plugin (stdout = stdin, through cat) with `bytes` of unique config. */
export async function echoCall(containerId: string, bytes = 256): Promise<ExecPluginResult> {
  const conf = { cniVersion: '1.0.0', name: 'faults', type: 'echo', containerId, pad: randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes) };
  return execPlugin({ plugin: ECHO, command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniPath: FIXTURE_PLUGINS, stdin: JSON.stringify(conf) });
}

export interface CallSummaryBody {
  id: string;
  status: 'running' | 'finished' | 'incomplete';
  incompleteReason: string | null;
  containerId: string | null;
  plugin: string;
  exitCode: number | null;
  signal?: number | null;
  lostRecords?: boolean;
  parentId?: string | null;
}

export interface CallDetailBody extends CallSummaryBody {
  stdin: { base64: string; bytes: number; truncated: boolean };
  stdout: { base64: string; bytes: number; truncated: boolean };
}

/** Every call for a container id (VERSION probes included), through the API. */
export async function callsOf(url: string, containerId: string): Promise<CallSummaryBody[]> {
  return (await getJson<{ items: CallSummaryBody[] }>(`${url}/api/v1/calls?containerId=${encodeURIComponent(containerId)}&includeVersion=true&limit=1000`)).items;
}

export interface Sleeper {
  /** Resolves once the plugin has ended (after stop()). */
  readonly done: Promise<ExecPluginResult>;
  /** SIGKILLs the plugin, and resolves when it has ended. */
  stop(): Promise<void>;
}

/** A call that stays in flight for up to 2 minutes (sleeper.sh), until stop(): the daemon sees it start and not end. */
export function startSleeper(containerId: string, name: string): Sleeper {
  let child: ChildProcess | null = null;
  const done = execPlugin({
    plugin: SLEEPER,
    command: 'ADD',
    containerId,
    netns: '/var/run/netns/none',
    ifname: 'eth0',
    cniPath: FIXTURE_PLUGINS,
    stdin: `{"cniVersion":"1.0.0","name":"${name}","type":"sleeper"}`,
    extraEnv: { SLEEPER_SECONDS: '120' },
    onSpawn: (c) => (child = c),
  });
  return {
    done,
    async stop() {
      (child as ChildProcess | null)?.kill('SIGKILL');
      await done;
    },
  };
}
