/**
 * The one path from tracer records to calls, whatever number of tracers
 * feed it: every tracer's parsed records go into one sequencer (back in time
 * order, the tracers' records together: they share the kernel's monotonic
 * clock), one merger (each exec, fork and exit once; each process tree's
 * payloads from one tracer) and one call assembler. So a call is one call
 * with its tree whole, across mode switches and tracer restarts.
 *
 * The thin shell around those pure parts: it reads the clock and arms the
 * timer that lets held records go when the clock says nothing older can
 * still come.
 */

import { CallAssembler, type AssemblerOptions } from './assemble/assembler.js';
import { RecordMerger } from './tracer/record-merger.js';
import { RecordSequencer } from './tracer/record-sequencer.js';
import { REORDER_WINDOW, ReorderWindow } from './tracer/reorder-window.js';
import type { CaptureMode, TracerRecord } from '../bpf/index.js';
import type { CollectorEvent } from './types.js';

/** Silence from every tracer after which every record they printed is out. */
const QUIET_MS = 40;

/** Now on the kernel's monotonic clock, the clock of the tracer's timestamps (libuv reads CLOCK_MONOTONIC too). */
export function monotonicNowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export class RecordPipeline {
  readonly assembler: CallAssembler;
  readonly merger: RecordMerger;
  private readonly sequencer = new RecordSequencer(new ReorderWindow(REORDER_WINDOW));
  /** Kernel time (µs) of the newest record handed to the assembler: how far the call state is up to date. */
  releasedTs = 0;
  /** When the last line from any tracer arrived (Date.now()). */
  lastRecordAt: number | null = null;
  private arrivalUs = 0;
  private clockTimer: NodeJS.Timeout | null = null;
  private readonly merged: TracerRecord[] = [];
  private readonly cut: number[] = [];

  constructor(
    assemblerOptions: AssemblerOptions,
    initial: { src: number | null; mode: CaptureMode },
    private readonly emit: (events: readonly CollectorEvent[]) => void,
  ) {
    this.assembler = new CallAssembler({ ...assemblerOptions, captureMode: initial.mode });
    this.merger = new RecordMerger(initial);
  }

  /** One parsed record from tracer `src`, as it arrived. */
  push(rec: TracerRecord, src: number): void {
    this.lastRecordAt = Date.now();
    // The clock is read for records with a timestamp (their arrival lag), not for each chunk line.
    if ('ts' in rec) this.arrivalUs = monotonicNowUs();
    this.feed(this.sequencer.push(rec, this.arrivalUs, src));
    // Per line: the arrival time just read stands for now (no clock read), and an armed timer costs a comparison.
    this.armClockRelease(this.arrivalUs);
  }

  /** The reorder window (µs) and the largest recent arrival lag it follows. */
  reorderState(nowUs = monotonicNowUs()): { windowUs: number; maxLagUs: number } {
    return { windowUs: this.sequencer.window.windowUs(nowUs), maxLagUs: this.sequencer.window.maxLagUs(nowUs) };
  }

  /**
   * Called often: releases what the reorder window has passed (it shrinks as
   * lags age out), and everything once every tracer has gone quiet, when
   * nothing earlier can still come.
   */
  releaseIfQuiet(nowMs: number): void {
    const nowUs = monotonicNowUs();
    const expired: TracerRecord[] = [];
    this.merger.expire(nowUs, expired);
    this.pushMerged(expired);
    if (this.sequencer.heldCount > 0) this.feed(this.sequencer.releaseDue(nowUs));
    const seen = this.lastRecordAt;
    if (this.sequencer.heldCount === 0 || seen === null || nowMs - seen < QUIET_MS) return;
    // Timers run before I/O in Node's loop: after a stall of this process, lines may be waiting in the
    // pipe. setImmediate runs after the I/O phase, so "still nothing new" then means the tracers are quiet.
    setImmediate(() => {
      if (this.lastRecordAt === seen) this.feed(this.sequencer.flush());
    });
  }

  /** Everything held goes on (no tracer left to send anything earlier). */
  flush(): void {
    this.disarmClockRelease();
    this.feed(this.sequencer.flush());
  }

  /** Tracer `src` ended: when it was not asked to, the calls whose bytes it may not have printed are marked. */
  sourceGone(src: number, unexpected: boolean): void {
    const released: TracerRecord[] = [];
    const cut = this.merger.sourceGone(src, released);
    if (unexpected) for (const pid of cut) this.assembler.markLostRecords(pid);
    this.pushMerged(released);
  }

  stopTimers(): void {
    this.disarmClockRelease();
  }

  /**
   * Lets held records go once the clock says nothing older can still come,
   * instead of waiting for the stream to move on: on a quiet node the last
   * records before a silence (a call's exec, its exit) go on some 30 ms after
   * they happened rather than after the 40 ms quiet flush. One timer at a
   * time, for the oldest record held.
   */
  private armClockRelease(nowUs: number): void {
    if (this.clockTimer !== null || this.sequencer.heldCount === 0) return;
    const dueUs = this.sequencer.clockDueUs(nowUs);
    if (dueUs === null) return;
    this.clockTimer = setTimeout(
      () => {
        // Timers run before I/O in Node's loop: lines may be waiting in the pipe. After the I/O phase
        // (setImmediate) they are pushed, and nothing a tracer printed before now is still out.
        setImmediate(() => {
          this.clockTimer = null;
          const now = monotonicNowUs();
          this.feed(this.sequencer.releaseByClock(now));
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

  private feed(records: readonly TracerRecord[]): void {
    if (records.length === 0) return;
    const merged = this.merged;
    merged.length = 0;
    this.cut.length = 0;
    this.merger.merge(records, this.sequencer.releasedSources, merged, this.cut);
    this.pushMerged(merged);
    merged.length = 0;
  }

  private pushMerged(records: readonly TracerRecord[]): void {
    const now = Date.now();
    for (const rec of records) {
      if ('ts' in rec && rec.ts > this.releasedTs) this.releasedTs = rec.ts;
      // Its payload tracer died while it ran: marked while its call is still open (before the exit).
      if (rec.kind === 'exit' && this.cut.includes(rec.pid)) this.assembler.markLostRecords(rec.pid);
      const events = this.assembler.push(rec, now);
      if (events.length > 0) this.emit(events);
    }
  }
}
