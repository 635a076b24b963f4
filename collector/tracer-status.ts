/**
 * What the collector says of its tracers (`Collector.status()`, shown by the
 * API's status and health routes), and the pure pieces it is built from.
 */

import { isoFromUs } from '../lib/index.js';
import type { CaptureMode, PayloadPath } from '../bpf/index.js';
import type { TracerRun } from './tracer/tracer-run.js';
import type { TracerGap } from './types.js';

/** The sched-only tracer that covers the main one's restarts (and the main one its own). */
export interface StandbyStatus {
  readonly running: boolean;
  readonly ready: boolean;
  readonly pid: number | null;
  readonly restarts: number;
  /** Its resident memory now; null while it does not run. */
  readonly rssBytes: number | null;
  /** CPU time it used since it started (user + system). */
  readonly cpuSeconds: number | null;
  readonly lastError: string | null;
}

export interface TracerStatus {
  readonly running: boolean;
  /** The tracer has seen the collector's own probe exec: calls are being recorded. */
  readonly ready: boolean;
  readonly mode: CaptureMode;
  /**
   * How full mode takes payloads: `syscall-exit` (the bytes really moved,
   * one probe), or `syscall-entry` (the fallback when the start-up check
   * finds the exit probe misreading); null in light mode or with no tracer.
   */
  readonly payloadPath: PayloadPath | null;
  readonly pid: number | null;
  readonly restarts: number;
  readonly lostEvents: number;
  readonly malformedLines: number;
  readonly lastRecordAt: string | null;
  readonly startedAt: string | null;
  readonly lastError: string | null;
  /** A previous tracer still finishing the calls it had before a mode switch. */
  readonly handoffInProgress: boolean;
  /** Times no tracer recorded (bpftrace went away and was restarted), the current one included. */
  readonly gaps: number;
  /** Seconds without a recording tracer over all gaps, the current one up to now. */
  readonly gapSeconds: number;
  /** The current gap (endedAt null), else the last one; null when there was none. */
  readonly lastGap: GapStatus | null;
  /**
   * How far (ms of kernel time) the tracer's output must have moved past a
   * record before it goes on: the wait for records of other CPUs that may
   * still come (see collector/tracer/reorder-window.ts). Follows arrivalLagMs; 0
   * while no tracer runs.
   */
  readonly reorderWindowMs: number;
  /** The largest delay, over the last seconds, between a record's kernel timestamp and its arrival here (ms). */
  readonly arrivalLagMs: number;
  /** The standby tracer; null when the daemon runs none. */
  readonly standby: StandbyStatus | null;
}

export interface GapStatus {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly reason: string;
  readonly incompleteCalls: number;
}

export function standbyStatus(run: TracerRun | null, usage: { rssBytes: number; cpuSeconds: number } | null, restarts: number, lastError: string | null): StandbyStatus {
  return {
    running: run?.running ?? false,
    ready: run?.ready ?? false,
    pid: run?.pid ?? null,
    restarts,
    rssBytes: usage?.rssBytes ?? null,
    cpuSeconds: usage?.cpuSeconds ?? null,
    lastError,
  };
}

/** The reorder window and arrival lag in ms; zeros while no tracer runs (null). */
export function reorderStatus(state: { windowUs: number; maxLagUs: number } | null): Pick<TracerStatus, 'reorderWindowMs' | 'arrivalLagMs'> {
  if (!state) return { reorderWindowMs: 0, arrivalLagMs: 0 };
  return { reorderWindowMs: Math.round(state.windowUs) / 1000, arrivalLagMs: Math.round(state.maxLagUs) / 1000 };
}

export function gapStatus(gap: TracerGap | null): GapStatus | null {
  if (gap === null) return null;
  return { startedAt: isoFromUs(gap.startedAtUs), endedAt: gap.endedAtUs === null ? null : isoFromUs(gap.endedAtUs), reason: gap.reason, incompleteCalls: gap.incompleteCalls };
}
