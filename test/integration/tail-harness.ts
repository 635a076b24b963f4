/**
 * Shared by the tail and metrics tests: realistic CNI calls, a collector
 * whose events the test emits by hand, an app on a real port with a real
 * SQLite store, and a websocket client that collects what it receives.
 */

import fs from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import type { ApiDeps } from '../../api/app.js';
import { registerMetrics } from '../../api/routes/metrics.js';
import { registerTail, type TailOptions } from '../../api/routes/tail.js';
import type { CallSummary } from '../../api/schemas/call-summary.js';
import type { CacheEvent, CacheListener } from '../../collector/cache/cache-types.js';
import type { CollectorStats, TracerStatus } from '../../collector/collector.js';
import type { CallListener, CapturedStream, CniCall, CollectorEvent } from '../../collector/types.js';
import { createCallStore, openDatabase, type CallStore } from '../../store/index.js';

// ---- calls -----------------------------------------------------------------

/** µs since the epoch: a few minutes ago, so `since` windows around it are realistic. */
export const T0 = Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000 * 1000;
let nextPid = 20_000;

const stream = (text = ''): CapturedStream => {
  const bytes = Buffer.from(text);
  return { bytes, totalBytes: bytes.length, truncated: false };
};

export interface CallSpec extends Partial<CniCall> {
  /** µs after T0. */
  readonly at?: number;
  readonly namespace?: string;
  readonly podName?: string;
  readonly exit?: number;
  readonly durationMs?: number;
}

/** A bridge ADD for demo/web-0 as the collector publishes it at its end; override what the test needs. */
export function makeCall(spec: CallSpec = {}): CniCall {
  const { at, namespace = 'demo', podName = 'web-0', exit = 0, durationMs = 42, ...rest } = spec;
  const pid = rest.pid ?? nextPid++;
  const startedAtUs = rest.startedAtUs ?? T0 + (at ?? 0);
  const command = rest.command === undefined ? 'ADD' : rest.command;
  const plugin = rest.plugin ?? 'bridge';
  const cniArgs = `IgnoreUnknown=1;K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=${podName};K8S_POD_UID=uid-${podName}`;
  const durationUs = durationMs * 1000;
  return {
    id: `${startedAtUs.toString(36).padStart(11, '0')}-${pid.toString(36)}`,
    pid,
    processStart: String(startedAtUs * 1000),
    ppid: 1234,
    parentId: null,
    parentProcess: { pid: 1234, comm: 'containerd', exe: '/usr/bin/containerd' },
    path: `/opt/cni/bin/${plugin}`,
    plugin,
    argv: [`/opt/cni/bin/${plugin}`],
    env: { CNI_COMMAND: command ?? '', CNI_ARGS: cniArgs, CNI_IFNAME: 'eth0' },
    command,
    containerId: `ctr-${podName}`,
    netns: `/var/run/netns/cni-${podName}`,
    ifname: 'eth0',
    cniArgs,
    pod: { namespace, name: podName, uid: `uid-${podName}`, infraContainerId: null },
    traceParent: null,
    isVersionProbe: command === 'VERSION',
    startedAtUs,
    endedAtUs: startedAtUs + durationUs,
    durationUs,
    outcome: { exitCode: exit, signal: null, coreDumped: false },
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    lostRecords: false,
    stdin: stream('{"cniVersion":"1.0.0","name":"demo","type":"bridge"}'),
    stdout: stream(exit === 0 ? '{"cniVersion":"1.0.0","ips":[{"address":"10.22.0.5/16"}]}' : '{"code":11,"msg":"no IP addresses available"}'),
    stderr: stream(),
    helpers: [],
    ...rest,
  };
}

/** The snapshot the collector publishes at exec: nothing read yet, nothing ended. */
export function asRunning(call: CniCall): CniCall {
  return { ...call, status: 'running', endedAtUs: null, durationUs: null, outcome: null, stdin: stream(), stdout: stream(), stderr: stream() };
}

export const started = (call: CniCall): CollectorEvent => ({ type: 'call.started', call: asRunning(call) });
export const finished = (call: CniCall): CollectorEvent => ({ type: 'call.finished', call });

// ---- the collector, driven by hand --------------------------------------------

export class FakeCollector {
  readonly listeners = new Set<CallListener>();
  /** How long each listener's onEvents took, ms. */
  readonly onEventsMs: number[] = [];

  readonly subscribe = (listener: CallListener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  emit(...events: CollectorEvent[]): void {
    for (const listener of this.listeners) {
      const t = performance.now();
      listener.onEvents(events);
      this.onEventsMs.push(performance.now() - t);
    }
  }
}

/** The cache watcher, driven by hand: the test emits its events. */
export class FakeCacheWatcher {
  readonly listeners = new Set<CacheListener>();

  readonly subscribe = (listener: CacheListener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  emit(...events: CacheEvent[]): void {
    for (const listener of this.listeners) listener.onCacheEvents(events);
  }
}

// ---- the app ------------------------------------------------------------------

export interface TestApp {
  readonly app: FastifyInstance;
  readonly store: CallStore;
  readonly collector: FakeCollector;
  readonly cacheWatcher: FakeCacheWatcher;
  /** ws://127.0.0.1:port */
  readonly wsBase: string;
  tracer: TracerStatus;
  storeStatus: ReturnType<ApiDeps['storeStatus']>;
  collectorStats: CollectorStats;
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly tail?: TailOptions;
  /** Runs before each listCalls the API makes: to have calls arrive while a replay reads. */
  readonly beforeListCalls?: () => void;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-tail-'));
  const store = createCallStore(openDatabase(path.join(dir, 'calls.db')));
  const apiStore: CallStore = {
    ...store,
    listCalls(filter, limit, cursor) {
      options.beforeListCalls?.();
      return store.listCalls(filter, limit, cursor);
    },
  };
  const collector = new FakeCollector();
  const cacheWatcher = new FakeCacheWatcher();
  const state = {
    tracer: {
      running: true,
      ready: true,
      mode: 'full',
      pid: 4321,
      restarts: 0,
      lostEvents: 0,
      malformedLines: 0,
      lastRecordAt: null,
      startedAt: null,
      lastError: null,
      handoffInProgress: false,
      gaps: 0,
      gapSeconds: 0,
      lastGap: null,
      reorderWindowMs: 30,
      arrivalLagMs: 1.5,
    } as TracerStatus,
    storeStatus: { writable: true, lastError: null, failingSince: null, pendingWrites: 0, droppedWrites: 0, databaseBytes: 0 },
    collectorStats: { openCalls: 0, callsStarted: 0, callsFinished: 0, records: 0, orphanChunks: 0 } as CollectorStats,
  };
  const deps: ApiDeps = {
    tracerStatus: () => state.tracer,
    collectorStats: () => state.collectorStats,
    storeStatus: () => state.storeStatus,
    store: apiStore,
    subscribe: collector.subscribe,
    subscribeCache: cacheWatcher.subscribe,
  };
  const app = Fastify();
  await registerTail(app, deps, options.tail);
  registerMetrics(app, deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');

  return Object.assign(state, {
    app,
    store,
    collector,
    cacheWatcher,
    wsBase: `ws://127.0.0.1:${address.port}`,
    async close() {
      await app.close();
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  });
}

// ---- a client -----------------------------------------------------------------

/** What the server sends, loosely typed: tests assert on the fields. */
export interface Received {
  readonly type: string;
  readonly call?: CallSummary;
  readonly filter?: Record<string, unknown>;
  readonly error?: { code: string; message: string; issues?: Array<{ path: string; message: string }> };
  readonly [key: string]: unknown;
}

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

export class TailClient {
  readonly messages: Received[] = [];
  readonly closed: Promise<Closed>;
  /** The TCP socket under the websocket, to stop reading from it. */
  rawSocket: Socket | null = null;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('upgrade', (response) => {
      this.rawSocket = response.socket;
    });
    ws.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)) as Received);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake();
      });
    });
    // Errors surface as the close; a listener keeps them from being thrown.
    ws.on('error', () => {});
  }

  static async connect(base: string, query = ''): Promise<TailClient> {
    const client = new TailClient(new WebSocket(`${base}/api/v1/tail${query}`));
    await new Promise<void>((resolve, reject) => {
      client.ws.once('open', () => resolve());
      client.ws.once('error', reject);
    });
    return client;
  }

  /** Resolves with the first message (from `from` on) that satisfies `test`. */
  async waitFor(test: (m: Received) => boolean, from = 0, timeoutMs = 5_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.slice(from).find(test);
      if (found) return found;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error(`closed before a matching message; got ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching message within ${timeoutMs} ms; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until `n` messages of `type` arrived (and no more come within a short settle time). */
  async waitForCount(type: string, n: number, timeoutMs = 5_000): Promise<Received[]> {
    await this.waitFor(() => this.ofType(type).length >= n, 0, timeoutMs);
    return this.ofType(type);
  }

  ofType(type: string): Received[] {
    return this.messages.filter((m) => m.type === type);
  }

  /** Call messages as "type id" lines, in arrival order. */
  callLog(): string[] {
    return this.messages.filter((m) => m.call !== undefined).map((m) => `${m.type} ${m.call?.id}`);
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** Sends `message` and waits for the server's answer of `answerType`. */
  async request(message: unknown, answerType: string): Promise<Received> {
    const from = this.messages.length;
    this.send(message);
    return this.waitFor((m) => m.type === answerType, from);
  }

  close(): void {
    this.ws.close();
  }

  private describe(): string {
    return JSON.stringify(this.messages.map((m) => m.type).slice(-10));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
