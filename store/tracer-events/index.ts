/** The tracer's own history in the store: its log, and the queue that keeps events through a disk outage. */

export { createTracerEventLog } from './tracer-events.js';
export { createTracerEventQueue, type TracerEventQueue, type TracerEventSink } from './tracer-event-queue.js';
export type { StoredTracerEvent, TracerEventKind } from './types.js';
