/** What CNI 1.1 added, in the store: calls named by their network, STATUS heartbeats as readiness per network, GC-driven DELs. */

export { createHeartbeatSieve, type HeartbeatSieve, type HeartbeatSieveOptions } from './heartbeat-sieve.js';
export { applyCheck, networkReadiness, transitionOf, isFlapping, transitionsInWindow, FLAP_MAX_TRANSITIONS, FLAP_WINDOW_MS, type CheckResult, type KeepReason } from './heartbeat-rules.js';
export { READINESS_BUCKETS_MS, addLatency, emptyTally, mergeTallies, quantileMs } from './latency.js';
export { cniErrorOf, cniErrorCodeText } from './status-answer.js';
export { networksByType, createConfNetworks } from './conf-networks.js';
export { createReadinessLog, type ReadinessLog } from './readiness-log.js';
export { GC_DEL_SQL, createGcDelMarker } from './gc-dels.js';
export type * from './types.js';
