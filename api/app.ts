/**
 * Builds the HTTP app. Tests call this builder with in-process fakes; the
 * daemon (daemon/run.ts) wires the real collector and store and listens.
 */

import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { CollectorStats, TracerStatus } from '../collector/collector.js';
import type { CaptureMode } from '../bpf/tracer-protocol.js';
import type { CallListener, TracerEventListener } from '../collector/types.js';
import type { CallStore, RetentionStatus, WriteTiming } from '../store/index.js';
import { authEnabled, registerAuth } from './auth.js';
import { answerFrameworkError, registerErrorHandling } from './errors.js';
import { registerCalls } from './routes/calls.js';
import { registerDocs, registerOpenApi } from './routes/docs.js';
import { registerHealth } from './routes/health.js';
import { registerMetrics } from './routes/metrics.js';
import { registerPods } from './routes/pods.js';
import { registerReplay } from './routes/replay.js';
import { registerTail } from './routes/tail.js';
import { registerTracer } from './routes/tracer.js';
import { createReadOps } from './reads/read-ops.js';
import type { ReadPoolStatus } from './reads/read-pool.js';
import { inlineReads, type Reads } from './reads/reads.js';
// CNI cache (issue 4):
import type { CacheListener } from '../collector/cache/cache-types.js';
import type { CacheWatcherStatus } from '../collector/cache/cache-watcher.js';
import type { CacheReader, FindingsReader } from '../store/cache/cache-reader.js';
import type { CacheFindingKind } from '../store/cache/cache-types.js';
import { registerCache } from './routes/cache.js';

/** What the API reads from (and asks of) the rest of the daemon. */
export interface ApiDeps {
  readonly tracerStatus: () => TracerStatus;
  readonly collectorStats: () => CollectorStats;
  readonly storeStatus: () => StoreStatus;
  /** The store's read side (the daemon's own connection). */
  readonly store: CallStore;
  /**
   * Where the read routes' work runs: the daemon's pool of read workers
   * (reads/read-pool.ts); absent: on this thread, over `store`, `cache` and `findings`.
   */
  readonly reads?: Reads;
  /** The read workers' state for /healthz; absent when reads run on this thread. */
  readonly readStatus?: () => ReadPoolStatus;
  /** Switches the tracer's capture mode without losing calls in flight. */
  readonly setCaptureMode?: (mode: CaptureMode) => Promise<void>;
  /**
   * Lets the API follow calls live (websocket tail, metrics): the daemon
   * passes the collector's subscribe.
   */
  readonly subscribe?: (listener: CallListener) => () => void;
  /** Follows the tracer's gaps (live tail `tracer.gap`): the daemon passes the collector's subscribeTracer. */
  readonly subscribeTracer?: (listener: TracerEventListener) => () => void;
  /** Bearer token required on every route but /healthz; null = no auth (loopback only). */
  readonly token?: string | null;
  readonly logger?: Logger;
  /** CNI cache (issue 4): libcni's cached entries, IP history, findings; null/absent when not watched. */
  readonly cache?: CacheReader | null;
  /** The findings log (cache findings and call loops) even when no cache is watched; absent: the cache reader's. */
  readonly findings?: FindingsReader | null;
  /** CNI cache (issue 4): follows the cache watcher's changes (tail cache.added/cache.removed); absent when not watched. */
  readonly subscribeCache?: (listener: CacheListener) => () => void;
  /** CNI cache (issue 4): the watcher's state for /healthz and /metrics; absent when not watched. */
  readonly cacheStatus?: () => CacheStatus;
  /** Retention: its limits, last run and totals for /healthz and /metrics; absent when the daemon runs none. */
  readonly retentionStatus?: () => RetentionStatus;
  /** How long the store's writes hold the database (and the event loop), for /metrics. */
  readonly writeTiming?: WriteTiming;
}

/** The cache watcher and its store side, as /healthz and /metrics show them. */
/**
 * The cache side's state for /healthz and /metrics: the watcher's own
 * (its scan time named for what it is to an operator, the last full
 * rescan) plus the store's findings and the writes waiting for it.
 */
export interface CacheStatus extends Omit<CacheWatcherStatus, 'lastScanAt'> {
  readonly openFindings: Partial<Record<CacheFindingKind, number>>;
  /** When the last full rescan finished (ISO 8601); null before the first. */
  readonly lastRescanAt: string | null;
  readonly pendingWrites: number;
  readonly droppedWrites: number;
}

export interface StoreStatus {
  readonly writable: boolean;
  readonly lastError: string | null;
  /** When writes started failing (ISO 8601); null while they succeed. */
  readonly failingSince: string | null;
  readonly pendingWrites: number;
  readonly droppedWrites: number;
  readonly databaseBytes: number;
}

export async function buildApp(deps: ApiDeps): Promise<FastifyInstance> {
  // pino's Logger is a FastifyBaseLogger; the cast keeps the instance on fastify's default logger type.
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger | undefined,
    logController: new LogController({ disableRequestLogging: true }),
    // Pod names may be 253 characters, more once percent-encoded; the zod
    // schemas set the real limits and name the field when one is exceeded.
    routerOptions: { maxParamLength: 1024 },
    frameworkErrors: answerFrameworkError,
  });
  // Zod validates requests and shapes responses; the same schemas feed the OpenAPI document.
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Order matters from here on. Error handling and auth first, so they cover
  // every route below (and unknown ones); the OpenAPI plugin before any
  // route, because it only sees routes added after it.
  registerErrorHandling(app);
  registerAuth(app, deps.token);
  await registerOpenApi(app, { authRequired: authEnabled(deps.token) });

  const reads = deps.reads ?? inlineReads(createReadOps({ store: deps.store, cache: deps.cache ?? null, findings: deps.findings ?? null }));
  registerHealth(app, deps);
  registerCalls(app, reads);
  registerReplay(app, reads);
  registerPods(app, reads);
  registerTracer(app, deps);
  registerCache(app, reads); // CNI cache (issue 4)
  await registerDocs(app);

  // Live side (api/tail/, api/metrics/): the websocket tail and /metrics.
  // They follow the collector through deps.subscribe and inherit the auth and
  // error handling above.
  await registerTail(app, deps);
  registerMetrics(app, deps);
  return app;
}
