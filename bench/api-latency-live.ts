/**
 * Exec → websocket latency: with the daemon recording (full capture), a
 * tail client on `/api/v1/tail?namespace=bench-live` and a real plugin
 * (host-local ADD, the way libcni execs it: argv = path only, config on
 * stdin, CNI_* in the environment) exec'd one call at a time. Each call is
 * timed from just before `spawn` to the arrival of its `call.started` and
 * `call.finished` messages, matched by container id. Optionally with other
 * CNI activity meanwhile (VERSION probes exec'd in the background).
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WebSocket } from 'ws';
import { distribution, round, type CpuShare, type Distribution } from './lib/stats.js';

export const LIVE_NAMESPACE = 'bench-live';
export const PLUGIN = '/usr/lib/cni/host-local';
const CNI_PATH = '/usr/lib/cni';
/** After the plugin exits, how long to wait for call.finished (the daemon holds calls for its finalize grace first). */
const FINISH_TIMEOUT_MS = 5_000;
/** Between calls, so each exec finds an idle daemon and tracer. */
const PAUSE_MS = 20;

export interface LiveCallSample {
  readonly i: number;
  readonly containerId: string;
  /** From just before spawn; null when the message never came. */
  readonly startedMs: number | null;
  readonly finishedMs: number | null;
  /** The plugin's exit as the benchmark saw it (child 'exit'). */
  readonly exitMs: number;
  readonly exitCode: number | null;
  /** The exec and the exit as the daemon recorded them (the calls' startedAt / endedAt, ms resolution), from just before spawn. */
  readonly recordedExecMs: number | null;
  readonly recordedExitMs: number | null;
}

export interface LiveResult {
  readonly available: boolean;
  readonly reason: string | null;
  readonly plugin: string;
  /** The other CNI activity run meanwhile, if any. */
  readonly background: { readonly intervalMs: number; readonly execs: number; readonly perSecond: number } | null;
  readonly execs: number;
  readonly pluginFailures: number;
  readonly missingStarted: number;
  readonly missingFinished: number;
  readonly startedMs: Distribution | null;
  readonly finishedMs: Distribution | null;
  readonly exitMs: Distribution | null;
  /** call.started minus the plugin's exit (as the benchmark saw it): how long after the plugin was done the call was announced. */
  readonly startedAfterExitMs: Distribution | null;
  /** call.finished minus the plugin's exit: mostly the daemon's finalize grace. */
  readonly finishedAfterExitMs: Distribution | null;
  /** How many call.started arrived before the plugin had exited. */
  readonly startedBeforeExit: number;
  /** CPU while measuring (filled in by the caller). */
  readonly cpu?: CpuShare;
  readonly samples: readonly LiveCallSample[];
}

interface Pending {
  startedAt: number | null;
  finishedAt: number | null;
  recordedStart: string | null;
  recordedEnd: string | null;
  onFinished: (() => void) | null;
}

interface TailMessage {
  type: string;
  call?: { containerId?: string | null; startedAt?: string; endedAt?: string | null };
}

function unavailable(reason: string, execs: number): LiveResult {
  return {
    available: false,
    reason,
    plugin: PLUGIN,
    background: null,
    execs,
    pluginFailures: 0,
    missingStarted: 0,
    missingFinished: 0,
    startedMs: null,
    finishedMs: null,
    exitMs: null,
    startedAfterExitMs: null,
    finishedAfterExitMs: null,
    startedBeforeExit: 0,
    samples: [],
  };
}

/** Opens the tail and resolves on its hello; rejects on an error message, a close or a timeout. */
function openTail(url: string, onMessage: (m: TailMessage, at: number) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`no hello from ${url} within 10 s`));
    }, 10_000);
    let hello = false;
    ws.on('message', (data) => {
      const at = performance.now();
      const m = JSON.parse(String(data)) as TailMessage;
      if (!hello) {
        clearTimeout(timer);
        if (m.type !== 'hello') {
          ws.terminate();
          reject(new Error(`first tail message was ${String(data).slice(0, 300)}`));
          return;
        }
        hello = true;
        resolve(ws);
        return;
      }
      onMessage(m, at);
    });
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      reject(new Error(`the tail upgrade was refused: HTTP ${res.statusCode}`));
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      if (!hello) reject(new Error(`the tail closed before hello: ${code} ${reason.toString()}`));
    });
  });
}

function execPlugin(containerId: string, podName: string, dataDir: string): { exited: Promise<{ at: number; code: number | null }> } {
  const conf = JSON.stringify({
    cniVersion: '1.0.0',
    name: 'bench-live',
    type: 'host-local',
    ipam: { type: 'host-local', ranges: [[{ subnet: '10.250.0.0/16' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir },
  });
  const child = spawn(PLUGIN, [], {
    env: {
      PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: containerId,
      CNI_NETNS: `/var/run/netns/${LIVE_NAMESPACE}`,
      CNI_IFNAME: 'eth0',
      CNI_ARGS: `K8S_POD_NAMESPACE=${LIVE_NAMESPACE};K8S_POD_NAME=${podName};IgnoreUnknown=1`,
      CNI_PATH,
    },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.stdin.on('error', () => undefined);
  child.stdin.end(conf);
  const exited = new Promise<{ at: number; code: number | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve({ at: performance.now(), code }));
  });
  return { exited };
}

/**
 * Other CNI activity on the node meanwhile: `host-local VERSION` exec'd
 * back to back with `intervalMs` between, as runtimes probe plugins (no pod,
 * so never in the tail's namespace filter). Its records keep the tracer's
 * output stream busy.
 */
function startBackground(intervalMs: number): { stop: () => Promise<number> } {
  let stopping = false;
  let count = 0;
  const loop = (async () => {
    while (!stopping) {
      await new Promise<void>((resolve) => {
        const child = spawn(PLUGIN, [], { env: { CNI_COMMAND: 'VERSION', CNI_PATH }, stdio: ['pipe', 'ignore', 'ignore'] });
        child.stdin.on('error', () => undefined);
        child.stdin.end(JSON.stringify({ cniVersion: '1.0.0' }));
        child.on('error', () => resolve());
        child.on('exit', () => resolve());
      });
      count++;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
      return count;
    },
  };
}

export interface LiveOptions {
  /** Run background VERSION execs this many ms apart while measuring; null: an otherwise idle node. */
  readonly backgroundIntervalMs: number | null;
}

export async function measureLive(baseUrl: string, execs: number, progress: (msg: string) => void, options: LiveOptions = { backgroundIntervalMs: null }): Promise<LiveResult> {
  const pending = new Map<string, Pending>();
  const wsUrl = `${baseUrl.replace(/^http/, 'ws')}/api/v1/tail?namespace=${LIVE_NAMESPACE}`;
  let ws: WebSocket;
  try {
    ws = await openTail(wsUrl, (m, at) => {
      const id = m.call?.containerId;
      if (typeof id !== 'string') return;
      const p = pending.get(id);
      if (!p) return;
      if (m.type === 'call.started') {
        p.startedAt ??= at;
        p.recordedStart ??= m.call?.startedAt ?? null;
      } else if (m.type === 'call.finished') {
        p.finishedAt ??= at;
        p.recordedStart ??= m.call?.startedAt ?? null;
        p.recordedEnd ??= m.call?.endedAt ?? null;
        p.onFinished?.();
      }
    });
  } catch (err) {
    return unavailable(err instanceof Error ? err.message : String(err), execs);
  }

  const dataDir = mkdtempSync(path.join(tmpdir(), 'cnirec-bench-live-ipam-'));
  const runTag = Date.now().toString(16);
  const samples: LiveCallSample[] = [];
  const background = options.backgroundIntervalMs === null ? null : startBackground(options.backgroundIntervalMs);
  let backgroundExecs = 0;
  const t0All = performance.now();
  try {
    // Let the background reach its steady rate first.
    if (background) await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < execs; i++) {
      const containerId = `${runTag}${i.toString(16).padStart(8, '0')}`.padStart(64, 'b');
      const p: Pending = { startedAt: null, finishedAt: null, recordedStart: null, recordedEnd: null, onFinished: null };
      pending.set(containerId, p);
      const finished = new Promise<void>((resolve) => (p.onFinished = resolve));
      const t0 = performance.now();
      const { exited } = execPlugin(containerId, `p${i}`, dataDir);
      const exit = await exited;
      await Promise.race([finished, new Promise((r) => setTimeout(r, FINISH_TIMEOUT_MS))]);
      samples.push({
        i,
        containerId,
        startedMs: p.startedAt === null ? null : round(p.startedAt - t0),
        finishedMs: p.finishedAt === null ? null : round(p.finishedAt - t0),
        exitMs: round(exit.at - t0),
        exitCode: exit.code,
        // Wall clock of t0 against the daemon's epoch times (its kernel-clock offset is set at startup).
        recordedExecMs: p.recordedStart === null ? null : round(Date.parse(p.recordedStart) - (performance.timeOrigin + t0)),
        recordedExitMs: p.recordedEnd === null ? null : round(Date.parse(p.recordedEnd) - (performance.timeOrigin + t0)),
      });
      pending.delete(containerId);
      if ((i + 1) % 50 === 0) progress(`  live: ${i + 1}/${execs} execs`);
      await new Promise((r) => setTimeout(r, PAUSE_MS));
    }
  } finally {
    if (background) backgroundExecs = await background.stop();
    ws.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - t0All) / 1000;

  const started = samples.flatMap((s) => (s.startedMs === null ? [] : [s.startedMs]));
  const finished = samples.flatMap((s) => (s.finishedMs === null ? [] : [s.finishedMs]));
  const afterExit = samples.flatMap((s) => (s.finishedMs === null ? [] : [s.finishedMs - s.exitMs]));
  const startedAfterExit = samples.flatMap((s) => (s.startedMs === null ? [] : [s.startedMs - s.exitMs]));
  return {
    available: true,
    reason: null,
    plugin: PLUGIN,
    background: background === null ? null : { intervalMs: options.backgroundIntervalMs!, execs: backgroundExecs, perSecond: round(backgroundExecs / seconds, 1) },
    execs,
    pluginFailures: samples.filter((s) => s.exitCode !== 0).length,
    missingStarted: samples.length - started.length,
    missingFinished: samples.length - finished.length,
    startedMs: started.length > 0 ? distribution(started) : null,
    finishedMs: finished.length > 0 ? distribution(finished) : null,
    exitMs: distribution(samples.map((s) => s.exitMs)),
    startedAfterExitMs: startedAfterExit.length > 0 ? distribution(startedAfterExit) : null,
    finishedAfterExitMs: afterExit.length > 0 ? distribution(afterExit) : null,
    startedBeforeExit: startedAfterExit.filter((x) => x < 0).length,
    samples,
  };
}
