/**
 * The HTTP API's public surface: for the daemon, the app builder and the types of what it is given; for
 * clients (the CLI), the contract's types, inferred from the same zod schemas that validate requests,
 * shape responses and feed the OpenAPI document (and the doctor report's presenter, which `cnirec doctor`
 * runs itself when no daemon answers).
 */

export { buildApp } from './app.js';
export type { ApiDeps, CacheDeps, NodeCniDeps, NodeCniStatus, ReadinessDeps, RuntimeDeps } from './deps.js';
export { presentReport } from './present/node-cni.js';
export { presentReadiness } from './present/readiness.js';
export { lostRecordsText } from './present/lost-records.js';
export type { ConfDiffBody, ConfVersionBody, DoctorReportBody, RecordKnowledgeBody } from './schemas/node-cni.js';

export type { CacheEntry, CacheList, IpHistory, IpHolding } from './schemas/cache.js';
export type { CallDetail } from './schemas/call-detail.js';
export { CALL_STATUSES, CNI_COMMANDS } from './schemas/call-query.js';
export { FINDING_KINDS } from './schemas/findings.js';
export { TIME_PARAM_HELP } from './schemas/time-param.js';
export type { CallPageBody as CallPage } from './schemas/call-list.js';
export type { CallSummary } from './schemas/call-summary.js';
export type { ErrorBody } from './schemas/error.js';
export type { Finding, FindingPage } from './schemas/findings.js';
export type { Health } from './schemas/health.js';
export type { Helper, HelperSummary } from './schemas/helper.js';
export type { Payload } from './schemas/payload.js';
export type { CallTree, PodStory, Sandbox } from './schemas/pod-story.js';
export type { TailCacheEntry, TailGap, TailServerMessage } from './schemas/tail.js';
export type { NetworkReadinessView, ReadinessList } from './schemas/readiness.js';
export type { GcPlanBody, GcPlanItemBody, RecordedBody, RuntimeStatusBody, SandboxRuntime } from './schemas/runtime.js';
export { gcPlanSchema, runtimeStatusSchema } from './schemas/runtime.js';
export { presentGcPlanItem, presentRuntime } from './present/runtime.js';
export { doctorRuntimeFromAnswer, doctorRuntimeFromDaemon, type DoctorRuntime } from './present/doctor-runtime.js';
export type { TracerStatusBody as TracerStatus, CaptureModeBody } from './schemas/tracer.js';
export { captureModeBodySchema } from './schemas/tracer.js';
export { BUNDLE_HEADER } from './routes/bundle.js';
export type { BundleDeps, BundleOutcome, DaemonReadings } from './deps.js';
export type { BundleQuery, SourceBody } from './schemas/bundle.js';
export { readTimeParam } from './schemas/time-param.js';
