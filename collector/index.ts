/**
 * The collector's public surface, for store/, api/ and the daemon: the collector itself (bpftrace
 * supervised, its records assembled into calls), what it publishes (types.ts), the libcni cache
 * watcher, redaction and the machine checks made before the tracer starts.
 */

export { CACHE_PROBLEM_KINDS, type CacheEntry, type CacheEvent, type CacheListener, type IpAllocation, type CacheWatcher, type CacheWatcherStatus, createCacheWatcher, readCacheDirsOnce, type CacheDirsNow } from './cache/index.js';
export { type CollectorStats, type TracerStatus, createCollector } from './collector.js';
export { type Redactor, createRedactor } from './redact/redact-events.js';
export { DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, REDACTION_MARKER, RedactionRuleError, compileKeyPatterns, compilePointers, splitPatternList } from './redact/redaction-rules.js';
export { isInCniPath } from './assemble/index.js';
export { CAPTURE_SETTINGS, type CaptureControl, type CaptureListener, type CaptureRequest, type CaptureStatus, type CaptureDecision, type CaptureScope, type CaptureSetting, type CapturePolicyOptions, type CapturePolicyState, type ObservedCall, callTrigger, decide, initialCaptureState, operatorRequest, expire, triggered, scopeText, inCaptureScope, scopeEvents } from './capture/index.js';
export { runPreflight } from './tracer/preflight.js';
export { LOST_RECORDS_CAUSES, type LostRecordsCause, type CallListener, type CallStatus, type CapturedStream, type CniCall, type KernelChange, type KernelMessage, type KernelObject, type CollectorEvent, type HelperProcess, type PodRef, type ProcessOutcome, type TracerEvent, type TracerEventListener, callSucceeded } from './types.js';
export {
  type ConfEvent,
  type ConfListener,
  type ConfWatcher,
  type ConfFileVersion,
  type BinaryVersion,
  type DoctorReport,
  type DoctorProblem,
  type RecordKnowledge,
  type Requested,
  PROBLEM_CODES,
  createBinaryHasher,
  createConfWatcher,
  confDirsToWatch,
  diagnose,
  readNode,
} from './node-setup/index.js';
export { changeSummaryText, iptablesSubject, withKernelMessage } from './changes/index.js';
export * from './runtime/index.js';
