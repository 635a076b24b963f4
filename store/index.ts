/** The store's public surface, for api/, cli/ and the daemon. */

export { APPLICATION_ID, latestVersion, openDatabase, openReadConnection, type Database, StoreError, isTransientStoreError, type StoreErrorCode, MIGRATIONS, migrate, type Migration, writeTimingFor, type WriteTiming, type WriteTimingStats, type WriteKind, type DatabaseSize, toStoreError } from './db/index.js';
export { createCallStore, byStartThenId, summaryOfCall, networkOfStdin, createCallReader, type CallReader, createStoreListener, type StoreListener, type StoreListenerOptions, MAX_PAGE_SIZE, type StoreStatus } from './calls/index.js';
export type * from './calls/index.js';
export { createRetentionWorker, type RetentionOptions, type RetentionRun, type RetentionStatus, type RetentionWorker, type RetentionCounts } from './retention/index.js';
export { type CacheEntryFields, cacheEntryFields, cacheFileWrittenAtMs, createCacheStoreListener, type CacheReader, createCacheReader, type CacheStore, createCacheStore, type StoredCacheEntry, type StoredIpHolding, type CacheStatus } from './cache/index.js';
export { CACHE_FINDING_KINDS, type CacheFindingKind, type StoredFinding, createCallLoopDetector, createLeftBehindCheck, type KernelObjectProbe, type KernelObjectRef, createFindingsReader, type FindingsReader, FINDING_SEVERITIES, FINDING_SEVERITY, type FindingSeverity, type FindingGroupPage, type FindingGroupQuery, type StoredFindingGroup, kindsOfSeverity, severityRankOf, MAX_FINDINGS_PAGE } from './findings/index.js';
export { type StoredTracerEvent, type TracerEventKind, type TracerEventQueue, createTracerEventQueue } from './tracer-events/index.js';
export {
  createConfHistory,
  type ConfHistory,
  createPluginBinaries,
  type PluginBinaries,
  createRecordKnowledge,
  createConfigFailureDetector,
  createGcChecks,
  parseGcStdin,
  type GcAnalysis,
  type GcChecks,
  type GcHolding,
  type Attachment,
  type StoredBinary,
  type StoredConfVersion,
  type StoredConfVersionWithBytes,
} from './node-setup/index.js';
export {
  createHeartbeatSieve,
  type HeartbeatSieve,
  type NetworkReadiness,
  type PluginReadiness,
  type ReadinessTransition,
  type ReadinessEvent,
  type ReadinessListener,
  type LatencyTally,
  READINESS_BUCKETS_MS,
  quantileMs,
  cniErrorCodeText,
} from './network/index.js';
export { createExportOutbox, EXPORT_SIGNALS, type ExportOutbox, type ExportSignal, type OutboxBounds, type OutboxEntry, type OutboxKind, type Watermarks, createExportReads, type CallTraceKey, type ExportReads } from './export/index.js';
export { BUNDLE_TABLES, ALL_PAYLOADS, NO_PAYLOADS, type PayloadChoice, type PodSelector, type RecordSelection, type SnapshotSummary, openRecordReadOnly, payloadCutFor, restoreIndexes, samplePayloads, snapshotRecord } from './bundle/index.js';
export {
  createRuntimeTracker,
  createRuntimeRecord,
  readinessStep,
  RECENT_RUNTIME_TRANSITIONS,
  type RuntimeRecord,
  type RecordedOrigin,
  type RuntimeTracker,
  type RuntimeView,
  type RuntimeTransition,
  type ConditionState,
  type StoredSandbox,
  type GcPlan,
  type LeakStatus,
  type RuntimeReadinessEvent,
  type RuntimeReadinessListener,
  REACHABLE,
  NETWORK_NOT_READY_SUBJECT,
} from './runtime/index.js';
