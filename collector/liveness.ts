/**
 * The liveness sweep's shell (the decisions: liveness-sweep.ts): reads the
 * clocks and /proc, ends the calls whose process is gone and whose exit can
 * no longer come, and runs a canary when an exit may still be on its way.
 */

import { isProcessAlive } from './tracer/proc-info.js';
import { runCanary } from './tracer/canary.js';
import { DAEMON_SWEEP, LivenessSweep } from './liveness-sweep.js';
import { monotonicNowUs } from './record-pipeline.js';
import type { RunningCall } from './record-flow.js';

const GONE_REASON = 'the plugin process is gone but its exit was not recorded';

/** What the sweep needs of the record pipeline. */
export interface LivenessCalls {
  runningCalls(): readonly RunningCall[];
  /** Kernel time (µs) of the newest record handed to the assembler. */
  readonly releasedTs: number;
  processGone(pid: number, start: string, reason: string): void;
}

/** Returns the sweep, to run every few seconds. */
export function createLiveness(calls: LivenessCalls): () => void {
  const rule = new LivenessSweep(DAEMON_SWEEP);
  return () => {
    const { gone, waiting } = rule.sweep(calls.runningCalls(), { epochUs: Date.now() * 1000, monoUs: monotonicNowUs(), releasedTs: calls.releasedTs }, isProcessAlive);
    for (const call of gone) calls.processGone(call.pid, call.start, GONE_REASON);
    // An exec of our own moves the tracer's stream forward even on an idle node.
    if (waiting) runCanary();
  };
}
