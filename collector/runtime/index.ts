/**
 * The runtime's side: a read-only CRI client to the node's container runtime (containerd, CRI-O), the
 * poller that asks it on a timer beside the tracer, and the pure rules over its answers (which
 * attachments it confirms leaked, and the DEL libcni's GC would run for one).
 */

export * from './types.js';
export { DEFAULT_CRI_ENDPOINTS, parseCriEndpoint, type CriEndpointSetting, type ParsedCriEndpoint } from './cri-endpoint.js';
export { createCriClient, CriCallError, DEFAULT_CRI_TIMEOUT_MS, type CriClient, type CriClientOptions, type CriStatus } from './cri-client.js';
export { pluginDirsOf } from './cri-decode.js';
export { CRI_PROTO, CRI_PACKAGE, CRI_SERVICE, criRoot, criType, DECODE_OPTIONS } from './cri-proto.js';
export { connectRuntime, createRuntimePoller, type RuntimePoller, type RuntimePollerOptions } from './runtime-poller.js';
export { askRuntimeOnce, type AskOptions, type RuntimeAnswer } from './ask-runtime.js';
export { attachmentKey, cachedAttachmentOf, reservationOf, mergeAttachments, type AttachmentPod, type NodeAttachment, type CachedAttachment, type Reservation } from './attachments.js';
export { judgeLeaks, leakTimingFor, type AttachmentVerdict, type LeakJudgement, type LeakTiming, type LeakVerdict, type SandboxList } from './leak-rules.js';
export { cniVersionAtLeast, delPlanOf, type DelPlan, type DelPlanResult, type DelStep } from './gc-del.js';
export { gcPlanOf, NO_CACHE_ENTRY, type GcPlanItem } from './gc-plan.js';
