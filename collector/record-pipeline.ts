/**
 * The thin shell around the record flow (record-flow.ts, pure): it reads
 * the clocks and arms the timer that lets held records go when the clock
 * says nothing older can still come. What the flow completes goes straight
 * to the publisher's one buffer (`emit`).
 */

import { RecordFlow, type CallStats, type RunningCall } from './record-flow.js';
import type { AssemblerOptions } from './assemble/index.js';
import { followsHeader, type CaptureMode, type TracerLineError } from '../bpf/index.js';
import type { CanaryProof } from './tracer/record-framer.js';
import type { CollectorEvent } from './types.js';

/** Silence from every tracer after which every record they printed is out. */
const QUIET_MS = 40;

/** Now on the kernel's monotonic clock, the clock of the tracer's timestamps (libuv reads CLOCK_MONOTONIC too). */
export function monotonicNowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class RecordPipeline {
  readonly flow: RecordFlow;
  /** When the last line from any tracer arrived (Date.now()). */
  lastRecordAt: number | null = null;
  private arrivalUs = 0;
  private clockTimer: NodeJS.Timeout | null = null;

  constructor(assemblerOptions: AssemblerOptions, initial: { src: number | null; mode: CaptureMode }, emit: (event: CollectorEvent) => void) {
    this.flow = new RecordFlow(assemblerOptions, initial, emit);
  }

  /** Kernel time (µs) of the newest record handed to the assembler. */
  get releasedTs(): number {
    return this.flow.releasedTs;
  }

  /** One line from tracer `src`, as it arrived (bound: a tracer run calls it as it is); why it is malformed, or null. */
  readonly push = (line: Buffer, src: number): TracerLineError | null => {
    const now = Date.now();
    this.lastRecordAt = now;
    // The clock is read for the lines that start a frame or carry a timestamp (their arrival lag), not for each chunk line.
    if (!followsHeader(line)) this.arrivalUs = monotonicNowUs();
    const error = this.flow.push(line, src, this.arrivalUs, now);
    // Per line: the arrival time just read stands for now (no clock read), and an armed timer costs a comparison.
    this.armClockRelease(this.arrivalUs);
    return error;
  };

  /** What tracer run `src`'s lines have proved so far (bound, as push). */
  readonly canaryProof = (src: number): CanaryProof => this.flow.canaryProof(src);

  /** The reorder window (µs) and the largest recent arrival lag it follows. */
  reorderState(nowUs = monotonicNowUs()): { windowUs: number; maxLagUs: number } {
    return this.flow.reorderState(nowUs);
  }

  /** Calls that start from now on take their payloads from tracer `src`; null: none does (recorded as `mode` calls). */
  setPayloadSource(src: number | null, mode: CaptureMode): void {
    this.flow.setPayloadSource(src, mode, monotonicNowUs());
  }

  /** The plugin process `pid` (started at `start`) is gone without its exit record: its call is published incomplete. */
  processGone(pid: number, start: string, reason: string): void {
    this.flow.processGone(pid, start, reason);
  }

  /**
   * No tracer is left to end the calls in flight: everything held goes on, then every call still open is
   * published (incomplete when still running). Returns how many ended incomplete.
   */
  endAllCalls(reason: string): number {
    this.releaseAll();
    return this.flow.endAllCalls(reason);
  }

  runningCalls(): readonly RunningCall[] {
    return this.flow.runningCalls();
  }

  livePids(): readonly number[] {
    return this.flow.livePids();
  }

  hasOpenCallStartedBefore(epochUs: number): boolean {
    return this.flow.hasOpenCallStartedBefore(epochUs);
  }

  stats(): CallStats {
    return this.flow.stats();
  }

  /**
   * Called often: releases what the reorder window has passed (it shrinks as
   * lags age out), and everything once every tracer has gone quiet, when
   * nothing earlier can still come; then publishes the calls that are done.
   */
  tick(nowMs: number): void {
    this.flow.releaseDue(monotonicNowUs(), nowMs);
    this.flow.tick(nowMs);
    const seen = this.lastRecordAt;
    if (this.flow.heldCount === 0 || seen === null || nowMs - seen < QUIET_MS) return;
    // Timers run before I/O in Node's loop: after a stall of this process, lines may be waiting in the
    // pipe. setImmediate runs after the I/O phase, so "still nothing new" then means the tracers are quiet.
    setImmediate(() => {
      if (this.lastRecordAt === seen) this.release(Date.now());
    });
  }

  /** Everything held goes on (no tracer left to send anything earlier). */
  releaseAll(): void {
    this.disarmClockRelease();
    this.flow.releaseAll(Date.now());
  }

  /** Tracer `src` ended: the calls whose bytes it may not have printed are marked (see RecordFlow.sourceGone). */
  sourceGone(src: number, unexpected: boolean): void {
    this.flow.sourceGone(src, unexpected, Date.now());
  }

  stopTimers(): void {
    this.disarmClockRelease();
  }

  /** What is held goes on (but what waits for its chunk lines), and what that completes is published at once (not at the next tick). */
  private release(nowMs: number): void {
    this.flow.releaseQuiet(monotonicNowUs(), nowMs);
    this.flow.tick(nowMs);
  }

  /**
   * Lets held records go once the clock says nothing older can still come,
   * instead of waiting for the stream to move on: on a quiet node the last
   * records before a silence (a call's exec, its exit) go on some 30 ms after
   * they happened rather than after the 40 ms quiet flush. One timer at a
   * time, for the oldest record held.
   */
  private armClockRelease(nowUs: number): void {
    if (this.clockTimer !== null || this.flow.heldCount === 0) return;
    const dueUs = this.flow.clockDueUs(nowUs);
    if (dueUs === null) return;
    this.clockTimer = setTimeout(
      () => {
        // Timers run before I/O in Node's loop: lines may be waiting in the pipe. After the I/O phase
        // (setImmediate) they are pushed, and nothing a tracer printed before now is still out.
        setImmediate(() => {
          this.clockTimer = null;
          const now = monotonicNowUs();
          const nowMs = Date.now();
          this.flow.releaseByClock(now, nowMs);
          // A call whose exit just went on is published now, not at the next tick.
          this.flow.tick(nowMs);
          this.armClockRelease(now);
        });
      },
      Math.max(1, Math.ceil((dueUs - nowUs) / 1000)),
    );
    this.clockTimer.unref();
  }

  private disarmClockRelease(): void {
    if (this.clockTimer !== null) clearTimeout(this.clockTimer);
    this.clockTimer = null;
  }
}
