/** The runtime's side in the store: its readiness timeline, the sandboxes it listed, the leaks it confirms. */

export { createRuntimeTracker, type RuntimeTracker, type RuntimeTrackerOptions } from './runtime-tracker.js';
export { createRuntimeRecord, RECENT_RUNTIME_TRANSITIONS, type RuntimeRecord } from './runtime-record.js';
export { readinessStep, type NewTransition, type ReadinessStep } from './readiness-rules.js';
export { NETWORK_NOT_READY_SUBJECT } from './runtime-text.js';
export type * from './types.js';
export { REACHABLE } from './types.js';
