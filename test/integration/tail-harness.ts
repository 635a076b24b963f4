/**
 * Shared by the tail and metrics tests: the calls of harness.ts at recent
 * instants, a collector whose events the test emits by hand, an app on a
 * real port with a real SQLite store, and a websocket client that collects
 * what it receives.
 */

import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach } from 'vitest';
import { WebSocket } from 'ws';
import type { ApiDeps } from '../../api/deps.js';
import { registerMetrics } from '../../api/routes/metrics.js';
import { registerTail, type TailOptions } from '../../api/routes/tail.js';
import type { CallSummary } from '../../api/schemas/call-summary.js';
import type { CacheEvent, CacheListener } from '../../collector/cache/cache-types.js';
import type { CollectorStats, TracerStatus } from '../../collector/collector.js';
import type { CallListener, CollectorEvent } from '../../collector/types.js';
import type { CallStore } from '../../store/index.js';
import { callFixtures, COLLECTOR_STATS, STORE_STATUS, TRACER_STATUS, tempStore } from './harness.js';

export { asRunning, finished, started, updated, type CallSpec } from './harness.js';

// ---- calls -----------------------------------------------------------------

/** µs since the epoch: a few minutes ago, so `since` windows around it are realistic. */
export const T0 = Math.floor((Date.now() - 10 * 60_000) / 1000) * 1000 * 1000;

export const { makeCall } = callFixtures(T0, 20_000);

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
  /** Once: a test may shut the server down itself before its kit does. */
  close(): Promise<void>;
}

export interface TestAppOptions {
  readonly tail?: TailOptions;
  /** Runs before each listCalls the API makes: to have calls arrive while a replay reads. */
  readonly beforeListCalls?: () => void;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { store, remove } = tempStore('cnirec-tail-');
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
    tracer: { ...TRACER_STATUS },
    storeStatus: { ...STORE_STATUS },
    collectorStats: { ...COLLECTOR_STATS },
  };
  const deps: ApiDeps = {
    tracerStatus: () => state.tracer,
    collectorStats: () => state.collectorStats,
    storeStatus: () => state.storeStatus,
    store: apiStore,
    subscribe: collector.subscribe,
    cache: { subscribe: cacheWatcher.subscribe },
  };
  const app = Fastify();
  await registerTail(app, deps, options.tail);
  registerMetrics(app, deps);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  let closed = false;

  return Object.assign(state, {
    app,
    store,
    collector,
    cacheWatcher,
    wsBase: `ws://127.0.0.1:${address.port}`,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      remove();
    },
  });
}

// ---- a test file's apps and clients ---------------------------------------------

export interface TailTestKit {
  /** The app the running test started. */
  readonly app: TestApp;
  start(options?: TestAppOptions): Promise<TestApp>;
  /** A client of that app, closed after the test; with `until`, resolves once a message of that type arrived. */
  connect(query?: string, until?: string): Promise<TailClient>;
}

/** Apps started and clients connected through it are closed after each test (clients first). */
export function tailTestKit(): TailTestKit {
  let current: TestApp | null = null;
  const clients: TailClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await current?.close();
    current = null;
  });
  const kit: TailTestKit = {
    get app() {
      if (current === null) throw new Error('no tail app started in this test');
      return current;
    },
    async start(options = {}) {
      current = await startTestApp(options);
      return current;
    },
    async connect(query = '', until) {
      const client = await TailClient.connect(kit.app.wsBase, query);
      clients.push(client);
      if (until !== undefined) await client.waitFor((m) => m.type === until);
      return client;
    },
  };
  return kit;
}

/** tailTestKit with an app started before each test. */
export function useTailApp(options: TestAppOptions = {}): TailTestKit {
  const kit = tailTestKit();
  beforeEach(async () => {
    await kit.start(options);
  });
  return kit;
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
