/**
 * What the API is given by the daemon (and by tests, as fakes): functions
 * that read the daemon's state, the store's read side, and subscriptions to
 * what the collector and the cache watcher publish. buildApp hands each
 * route group only the part it uses (the *Deps types below), so a route's
 * signature says what it depends on.
 */

import type { Logger } from 'pino';
import type { CaptureMode } from '../bpf/index.js';
import type { CacheListener, CallListener, CaptureControl, CollectorStats, TracerEventListener, TracerStatus } from '../collector/index.js';
import type { ConfListener, DoctorReport, RecordKnowledge } from '../collector/index.js';
import type { GcPlan, NetworkReadiness, ReadinessListener, RuntimeReadinessListener, RuntimeView, StoredSandbox } from '../store/index.js';
import type { CacheReader, CacheStatus, CallStore, ConfHistory, FindingsReader, GcChecks, PluginBinaries, RetentionStatus, StoreStatus, WriteTiming } from '../store/index.js';
import type { OtelExportStatus } from '../otel/index.js';
import type { BundleQuery, SourceBody } from './schemas/bundle.js';

/** The libcni cache side; absent (or null) when the daemon watches no cache directory. */
export interface CacheDeps {
  /** libcni's cached entries and the IP history. */
  readonly reader?: CacheReader;
  /** Follows the watcher's changes (tail `cache.added` / `cache.removed`). */
  readonly subscribe?: (listener: CacheListener) => () => void;
  /** The watcher's state for /healthz and /metrics. */
  readonly status?: () => CacheStatus;
}

export interface ApiDeps {
  readonly tracerStatus: () => TracerStatus;
  readonly collectorStats: () => CollectorStats;
  readonly storeStatus: () => StoreStatus;
  /** The store's read side (the daemon's own connection). */
  readonly store: CallStore;
  /** Switches the tracer's capture mode without losing calls in flight; absent: not switchable. */
  readonly setCaptureMode?: (mode: CaptureMode) => Promise<void>;
  /** The capture policy (auto, full, light; an operator's window and scope): its state, and changing it. Absent: only setCaptureMode. */
  readonly capture?: CaptureControl;
  /** Follows calls live (websocket tail, metrics): the daemon passes the collector's subscribe. */
  readonly subscribe?: (listener: CallListener) => () => void;
  /** Follows the calls as the store keeps them, each named by its CNI network (healthy STATUS heartbeats folded away): /metrics counts these. */
  readonly subscribeStored?: (listener: CallListener) => () => void;
  /** Follows the tracer's gaps (tail `tracer.gap`): the daemon passes the collector's subscribeTracer. */
  readonly subscribeTracer?: (listener: TracerEventListener) => () => void;
  /** Bearer token required on every route but /healthz; null = no auth (loopback only). */
  readonly token?: string | null;
  readonly logger?: Logger;
  readonly cache?: CacheDeps | null;
  /** The findings log (cache findings and call loops), read whether or not caches are watched; absent: the cache reader's. */
  readonly findings?: FindingsReader | null;
  /** Retention: its limits, last run and totals for /healthz and /metrics; absent when the daemon runs none. */
  readonly retentionStatus?: () => RetentionStatus;
  /** How long the store's writes hold the database (and the event loop), for /healthz and /metrics. */
  readonly writeTiming?: WriteTiming;
  /** cnirec's version, for cnirec_build_info; absent: "unknown". */
  readonly version?: string;
  /** The node's CNI setup (doctor report, conf history, binaries, GC); absent: those routes answer 501. */
  readonly nodeCni?: NodeCniDeps;
  /** Follows the conf dir watcher (tail `config.changed`). */
  readonly subscribeConf?: (listener: ConfListener) => () => void;
  /** OpenTelemetry export's state for /healthz and /metrics; absent when the daemon exports nothing. */
  readonly otelStatus?: () => OtelExportStatus;
  /** CNI STATUS readiness per network (GET /api/v1/node/cni/status, /metrics, the tail's network.readiness); absent: 501. */
  readonly readiness?: ReadinessDeps;
  /** The built web view (dist/ui/, holding index.html); absent or null: /ui/ answers that it is not built. */
  readonly uiDir?: string | null;
  /** The container runtime's side (GET /api/v1/node/runtime, the gc plan, sandboxes in pod stories, /metrics, the tail); absent: 501. */
  readonly runtime?: RuntimeDeps;
  /** What the record is of: this node live, or a bundle opened with `cnirec open` (GET /api/v1/source); absent: a live node of unknown name. */
  readonly source?: () => SourceBody;
  /** Makes bundles of the record (GET /api/v1/bundle); absent: 501. */
  readonly bundle?: BundleDeps;
}

/** What the API reads of its own routes for a bundle: the daemon's state when it was made. */
export interface DaemonReadings {
  readonly health: unknown;
  readonly tracer: unknown;
  readonly nodeCni: unknown;
  readonly readiness: unknown;
  /** GET /api/v1/node/runtime: the container runtime as the daemon saw it; null when it does not ask one. */
  readonly runtime: unknown;
  /** GET /api/v1/node/cni/gc-plan: what a GC would have freed then; null when the daemon does not ask a runtime. */
  readonly gcPlan: unknown;
  readonly metrics: string | null;
}

export type BundleOutcome =
  | { readonly ok: true; readonly file: string; readonly name: string; cleanup(): Promise<void> }
  /** A refusal the client can act on (a call not recorded, too big for maxBytes). */
  | { readonly ok: false; readonly status: 400 | 404 | 413; readonly message: string };

/** GET /api/v1/bundle: the daemon makes the bundle; the route reads the daemon's own state for it and streams the file. */
export interface BundleDeps {
  make(query: BundleQuery, readings: DaemonReadings): Promise<BundleOutcome>;
}

/** What the runtime tracker says: the runtime's readiness, its sandboxes, what a GC would free. */
export interface RuntimeDeps {
  view(): RuntimeView;
  subscribe(listener: RuntimeReadinessListener): () => void;
  sandboxes(ids: readonly string[]): Map<string, StoredSandbox>;
  sandboxesOfPod(namespace: string, name: string): StoredSandbox[];
  /** null: no plan can be given here (a bundle opened with `cnirec open` whose daemon did not answer when it was taken). */
  gcPlan(): GcPlan | null;
  /** Open leaked-attachment findings by network (null: not known). */
  leakedByNetwork(): Map<string | null, number>;
}

/** GET /api/v1/node/runtime, GET /api/v1/node/cni/gc-plan (the source: which bundle cannot give a plan). */
export type RuntimeRouteDeps = Pick<ApiDeps, 'runtime' | 'source'>;

/** The heartbeat sieve's read side: each network's readiness, and its checks and changes as they come. */
export interface ReadinessDeps {
  networks(): NetworkReadiness[];
  subscribe(listener: ReadinessListener): () => void;
}

/** GET /api/v1/node/cni/status. */
export type ReadinessRouteDeps = Pick<ApiDeps, 'readiness'>;

/** The node setup side's state for /metrics. */
export interface NodeCniStatus {
  readonly confDirs: readonly string[];
  readonly watchedFiles: number;
  readonly changes: { readonly added: number; readonly changed: number; readonly removed: number };
  /** Problems of the last report, by severity. */
  readonly problems: { readonly error: number; readonly warning: number };
  readonly lastReportAtMs: number | null;
  readonly binariesHashed: number;
  readonly binaryQueueDropped: number;
}

/** The node's CNI setup routes (api/routes/node-cni.ts): the daemon passes its node setup wiring. */
export interface NodeCniDeps {
  report(): DoctorReport & { readonly watchedConfDirs: readonly string[] };
  record(): RecordKnowledge;
  readonly history: Pick<ConfHistory, 'versions' | 'version' | 'previousOf' | 'versionForCall'>;
  readonly binaries: Pick<PluginBinaries, 'list' | 'forCall'>;
  readonly gc: Pick<GcChecks, 'analyse' | 'recent'>;
  status(): NodeCniStatus;
}

/** GET /healthz. */
export type HealthDeps = Pick<ApiDeps, 'tracerStatus' | 'capture' | 'collectorStats' | 'storeStatus' | 'retentionStatus' | 'writeTiming' | 'cache' | 'otelStatus' | 'runtime'>;

/** GET /metrics: the daemon's numbers at scrape time, and the calls as they finish. */
export type MetricsDeps = Pick<
  ApiDeps,
  'runtime' | 'readiness' | 'tracerStatus' | 'capture' | 'collectorStats' | 'storeStatus' | 'subscribe' | 'subscribeStored' | 'findings' | 'retentionStatus' | 'writeTiming' | 'cache' | 'nodeCni' | 'version' | 'otelStatus'
> & {
  readonly store: Pick<CallStore, 'databaseSizeBytes'>;
};

/** WS /api/v1/tail: live calls, tracer gaps and cache changes, and stored calls to catch up on. */
export type TailDeps = Pick<ApiDeps, 'runtime' | 'readiness' | 'subscribe' | 'subscribeTracer' | 'cache' | 'subscribeConf' | 'capture'> & {
  readonly store: Pick<CallStore, 'listCalls' | 'failureTexts'>;
};

/** The node's CNI setup routes, and GET /api/v1/calls/:id/setup. */
export type NodeCniRouteDeps = Pick<ApiDeps, 'nodeCni'> & { readonly store: Pick<CallStore, 'getCall'> };

/** The web view's files under /ui/. */
export type UiDeps = Pick<ApiDeps, 'uiDir'>;

/** GET /api/v1/tracer, PUT /api/v1/tracer/mode. */
export type TracerDeps = Pick<ApiDeps, 'tracerStatus' | 'setCaptureMode' | 'capture' | 'source'>;

/** GET /api/v1/bundle and GET /api/v1/source. */
export type BundleRouteDeps = Pick<ApiDeps, 'bundle' | 'source' | 'version'>;
