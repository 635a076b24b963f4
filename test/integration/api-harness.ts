/**
 * Shared by the REST API tests: the calls of harness.ts at fixed instants,
 * a real SQLite store in a temp file fed through writeEvents, and the app
 * built by buildApp, driven in-process with inject.
 */

import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../api/app.js';
import type { ApiDeps } from '../../api/deps.js';
import type { StoreStatus } from '../../store/index.js';
import type { TracerStatus } from '../../collector/collector.js';
import type { CacheEntry } from '../../collector/cache/cache-types.js';
import type { CaptureMode } from '../../bpf/tracer-protocol.js';
import type { CniCall } from '../../collector/types.js';
import { createFindingsReader } from '../../store/findings/findings-reader.js';
import { createCacheStore, type CacheStore } from '../../store/cache/cache-store.js';
import type { CallStore, Database } from '../../store/index.js';
import { callFixtures, COLLECTOR_STATS, finished, STORE_STATUS, TRACER_STATUS as HEALTHY_TRACER, tempStore } from './harness.js';

export { asRunning, finished, started, stream, type CallSpec } from './harness.js';

// ---- calls -------------------------------------------------------------------

/** 2025-11-21T18:33:20.000Z in µs: fixed, so time filters can name exact instants. */
export const T0 = 1_763_750_000_000_000;
export const T0_ISO = '2025-11-21T18:33:20.000Z';
export const T0_MS = T0 / 1000;

export const { makeCall, delegatedIpam, makeHelper } = callFixtures(T0, 30_000);

/** A libcni cache entry for container `id` (network podnet, pod demo/pod-<id>, 10.22.0.5), as the watcher reports it. */
export const cacheEntry = (id: string, over: Partial<CacheEntry> = {}): CacheEntry => ({
  path: `/var/lib/cni/results/podnet-${id}-eth0`,
  dir: '/var/lib/cni/results',
  format: 'cniCacheV1',
  containerId: id,
  networkName: 'podnet',
  ifName: 'eth0',
  netns: '/var/run/netns/x',
  cniArgs: [['K8S_POD_NAMESPACE', 'demo'], ['K8S_POD_NAME', `pod-${id}`]],
  capabilityArgs: null,
  config: { cniVersion: '1.0.0', name: 'podnet', plugins: [{ type: 'bridge' }] },
  configProblem: null,
  result: { ips: [{ address: '10.22.0.5/16' }] },
  ips: ['10.22.0.5'],
  pod: { namespace: 'demo', name: `pod-${id}`, uid: null, infraContainerId: null },
  digest: id,
  mtimeMs: T0_MS + 50,
  ...over,
});

// ---- the app -------------------------------------------------------------------

/** A tracer recording since T0. */
export const TRACER_STATUS: TracerStatus = { ...HEALTHY_TRACER, lastRecordAt: T0_ISO, startedAt: T0_ISO };

export interface ApiHarness {
  readonly app: FastifyInstance;
  readonly store: CallStore;
  /** The cache store on the same database, when started with `cache: true`. */
  readonly cache: CacheStore | null;
  /** What the API was asked to do to the tracer. */
  readonly modeSwitches: CaptureMode[];
  /** The database under the store, for stores beside it (findings). */
  readonly db: Database;
  /** Every line the app logged (debug and up), as written. */
  readonly logLines: string[];
  tracer: TracerStatus;
  storeStatus: StoreStatus;
  write(...calls: CniCall[]): void;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly token?: string | null;
  /** Replaces the default setCaptureMode (which records the switch and updates the status); null leaves it out. */
  readonly setCaptureMode?: ApiDeps['setCaptureMode'] | null;
  /** Lets a test break the store the API reads from. */
  readonly wrapStore?: (store: CallStore) => CallStore;
  /** Also a cache store on the same database, passed to the API as deps.cache. */
  readonly cache?: boolean;
  /** The OpenTelemetry exporter's state, as the daemon passes it when exporting. */
  readonly otelStatus?: ApiDeps['otelStatus'];
  /** The capture policy, as the daemon passes it. */
  readonly capture?: ApiDeps['capture'];
  /** The web view's built files (dist/ui/ or a stand-in). */
  readonly uiDir?: string | null;
  /** The container runtime's side, made on the harness's database (a tracker fed by the test). */
  readonly runtime?: (db: Database) => NonNullable<ApiDeps['runtime']>;
  /** Makes bundles of the harness's database (GET /api/v1/bundle), as the daemon's bundle wiring does. */
  readonly bundle?: (db: Database) => NonNullable<ApiDeps['bundle']>;
}

export async function startApi(options: HarnessOptions = {}): Promise<ApiHarness> {
  const { db, store, remove } = tempStore('cnirec-api-');
  const cache = options.cache ? createCacheStore(db, { sinceMs: T0_MS - 1000, graceMs: 1000 }) : null;
  const modeSwitches: CaptureMode[] = [];
  const state = { tracer: { ...TRACER_STATUS }, storeStatus: { ...STORE_STATUS } };
  const defaultSetMode = async (mode: CaptureMode) => {
    modeSwitches.push(mode);
    state.tracer = { ...state.tracer, mode };
  };
  const setCaptureMode = options.setCaptureMode === null ? undefined : (options.setCaptureMode ?? defaultSetMode);
  const logLines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const app = await buildApp({
    logger,
    tracerStatus: () => state.tracer,
    collectorStats: () => ({ ...COLLECTOR_STATS }),
    storeStatus: () => state.storeStatus,
    store: options.wrapStore ? options.wrapStore(store) : store,
    token: options.token ?? null,
    cache: cache && { reader: cache },
    // As the daemon does: the findings log is read whether or not caches are watched.
    findings: createFindingsReader(db),
    ...(setCaptureMode ? { setCaptureMode } : {}),
    ...(options.otelStatus ? { otelStatus: options.otelStatus } : {}),
    ...(options.capture ? { capture: options.capture } : {}),
    uiDir: options.uiDir ?? null,
    ...(options.runtime ? { runtime: options.runtime(db) } : {}),
    ...(options.bundle ? { bundle: options.bundle(db) } : {}),
  });
  await app.ready();
  return Object.assign(state, {
    app,
    db,
    store,
    cache,
    modeSwitches,
    logLines,
    write: (...calls: CniCall[]) => store.writeEvents(calls.map(finished)),
    async close() {
      await app.close();
      remove();
    },
  });
}

/** GET a JSON route in-process; answers the status and the parsed body. */
export async function getJson<T = Record<string, unknown>>(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, body: res.json() as T };
}

export interface ErrorBody {
  error: { code: string; message: string; issues?: Array<{ path: string; message: string }> };
}
