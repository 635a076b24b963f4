/**
 * The collector: bpftrace's records in, call events out, to subscribers (the
 * store, the live tail) in small batches. Knows nothing of HTTP or SQL. This
 * file wires its parts and keeps their clocks:
 *
 * - the tracer supervisor (tracer-supervisor.ts): the main tracer and a
 *   sched-only standby beside it, so that when either dies the other still
 *   sees every call start and end while it is restarted; capture mode
 *   switches that lose no call in flight;
 * - the record pipeline (record-pipeline.ts): every tracer's records into one
 *   sequencer, one merger (each event once) and one call assembler;
 * - the liveness sweep (liveness.ts): calls whose process is gone and whose
 *   exit will not come;
 * - the publisher (publisher.ts): redaction and the fan-out to subscribers.
 */

import { getPriority, setPriority } from 'node:os';
import type { Logger } from 'pino';
import type { CaptureMode } from '../bpf/index.js';
import { hostNetnsInode, netnsInodeOf } from './changes/index.js';
import { createLiveness } from './liveness.js';
import { createPublisher } from './publisher.js';
import type { CallStats } from './record-flow.js';
import { RecordPipeline } from './record-pipeline.js';
import type { Redactor } from './redact/redact-events.js';
import { isOwnCanary } from './tracer/canary.js';
import { describeProcess } from './tracer/proc-info.js';
import { TRACER_NICE, type TracerSettings } from './tracer/tracer-process.js';
import { MonoToEpoch } from './tracer/wall-clock.js';
import { TRACER_STOPPED_REASON, TracerSupervisor } from './tracer-supervisor.js';
import type { TracerStatus } from './tracer-status.js';
import type { CallListener, TracerEventListener } from './types.js';

export type { GapStatus, StandbyStatus, TracerStatus } from './tracer-status.js';
export type CollectorStats = CallStats;

export interface CollectorOptions {
  readonly tracer: TracerSettings;
  readonly logger: Logger;
  readonly finalizeGraceMs?: number;
  readonly maxStreamBytes?: number;
  /** Replaces secrets in payloads before any subscriber sees a call; none when absent. */
  readonly redactor?: Redactor;
}

/** How often held records and finished waits are looked at (calls' events go out as they complete). */
const PUBLISH_EVERY_MS = 25;
/** How often running calls are checked against /proc, for exits the tracer never reported. */
const LIVENESS_EVERY_MS = 5_000;
/** How long bpftrace may take to compile, load and prove it sees execs. */
const READY_TIMEOUT_MS = 60_000;
/** After a mode switch, how long the old tracer may keep following its calls. */
const HANDOFF_TIMEOUT_MS = 600_000;

export interface Collector {
  subscribe(listener: CallListener): () => void;
  /** Follows the tracer itself (its gaps); returns the function that stops following. */
  subscribeTracer(listener: TracerEventListener): () => void;
  /** Starts bpftrace and resolves once it records; rejects with bpftrace's own words if it cannot. */
  start(): Promise<void>;
  /** Switches capture mode without losing calls in flight; resolves when the new tracer records. */
  setMode(mode: CaptureMode): Promise<void>;
  /** Stops the tracer; calls still running are published as incomplete. */
  stop(): Promise<void>;
  /** SIGKILLs every bpftrace at once, synchronously: for exit paths that cannot wait (process.exit, a crash). */
  killNow(): void;
  status(): TracerStatus;
  stats(): CollectorStats;
}

export function createCollector(opts: CollectorOptions): Collector {
  const log = opts.logger;
  const publisher = createPublisher(log, opts.redactor);
  const wallClock = new MonoToEpoch(undefined, {
    onStep: (stepUs) => log.warn({ stepMs: Math.round(stepUs / 1000) }, 'the wall clock stepped; calls recorded from now on are dated by the new time'),
  });
  const pipeline = new RecordPipeline(
    {
      monoToEpochUs: (mono) => wallClock.toEpochUs(mono),
      describeParent: describeProcess,
      isOwnCanary,
      hostNetnsInode: hostNetnsInode(),
      netnsInodeOf,
      ...(opts.finalizeGraceMs !== undefined ? { finalizeGraceMs: opts.finalizeGraceMs } : {}),
      ...(opts.maxStreamBytes !== undefined ? { maxStreamBytes: opts.maxStreamBytes } : {}),
    },
    { src: null, mode: opts.tracer.mode },
    publisher.emit,
  );
  /** The publish tick: held records and finished waits go on, retired tracers are let go, subscribers hear. */
  const publish = () => {
    const now = Date.now();
    pipeline.tick(now);
    supervisor.checkHandoff(now);
    publisher.deliver();
  };
  const supervisor = new TracerSupervisor(pipeline, {
    settings: opts.tracer,
    log,
    readyTimeoutMs: READY_TIMEOUT_MS,
    handoffTimeoutMs: HANDOFF_TIMEOUT_MS,
    toEpochUs: (mono) => wallClock.toEpochUs(mono),
    publishNow: publish,
    announceGap: publisher.announceGap,
  });
  const sweepLiveness = createLiveness(pipeline);
  let timers: NodeJS.Timeout[] = [];

  return {
    subscribe: publisher.subscribe,
    subscribeTracer: publisher.subscribeTracer,
    async start() {
      raiseOwnPriority(log);
      timers.push(setInterval(publish, PUBLISH_EVERY_MS));
      timers.push(setInterval(sweepLiveness, LIVENESS_EVERY_MS));
      await supervisor.start();
    },
    setMode: (mode) => supervisor.setMode(mode),
    async stop() {
      supervisor.halt();
      for (const t of timers) clearInterval(t);
      timers = [];
      // The publish timer is gone: release what bpftrace hands over while draining by hand.
      const releasing = setInterval(publish, PUBLISH_EVERY_MS);
      await supervisor.drain();
      clearInterval(releasing);
      await supervisor.stopRuns();
      pipeline.endAllCalls(TRACER_STOPPED_REASON);
      pipeline.stopTimers();
      publisher.deliver();
    },
    killNow: () => supervisor.killNow(),
    status: () => supervisor.status(),
    stats: () => pipeline.stats(),
  };
}

/**
 * This thread reads bpftrace's output: when it falls behind, bpftrace blocks
 * writing to the pipe and the kernel drops what its buffers cannot hold. It
 * runs at the tracer's priority (Linux sets it per thread: the main thread,
 * where the lines are parsed and assembled).
 */
function raiseOwnPriority(log: Logger): void {
  try {
    if (getPriority(0) > TRACER_NICE) setPriority(0, TRACER_NICE);
  } catch (err) {
    log.warn({ err: (err as Error).message }, "could not raise the collector's scheduling priority: on a busy node the tracer may lose records");
  }
}
