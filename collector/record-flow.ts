/**
 * The pure core of the path from tracer lines to calls, one line of named
 * stages, each handing only to the next:
 *
 *   frame    each tracer run's lines into whole frames (tracer/record-framer.ts: a header with its chunk lines)
 *   order    every run's frames into one time order (tracer/record-sequencer.ts: they share the kernel's clock)
 *   dedupe   each exec, fork and exit once, each tree's payloads from one run (tracer/record-merger.ts)
 *   assemble frames into calls (assemble/: CallAssembler, over the one process table the merger reads too)
 *   publish  each call's events to `emit`, the collector's one buffer before its subscribers (publisher.ts)
 *
 * So a call is one call with its tree whole, across mode switches and tracer
 * restarts.
 *
 * Pure: every method takes the time (`monoUs`, the kernel's monotonic clock
 * of the records' timestamps; `nowMs`, the wall clock the assembler dates its
 * waits by). record-pipeline.ts is the thin shell that reads the clocks and
 * arms the timers; a simulation drives this class with a clock of its own
 * (test/unit/record-flow-simulation.test.ts).
 *
 * Losses: bpftrace says only how many records a CPU buffer dropped, not whose
 * nor when ("Lost N events", in the stream where that buffer was read). They
 * were dropped while the buffer was full, so after the oldest record still
 * unread in it was printed: within the arrival lag of the tracer's records
 * before the notice came. Every call alive at any moment of that span is
 * marked lostRecords (LOSS_LOOKBACK_*), unless it is proved whole otherwise:
 * a recorder may lose bytes when the node starves it, never without saying so.
 */

import { CallAssembler, ProcessTable, type AssemblerOptions } from './assemble/index.js';
import { FRAME_WAIT_US, RecordFramer, type CanaryProof, type Framed } from './tracer/record-framer.js';
import { RecordMerger } from './tracer/record-merger.js';
import { RecordSequencer, type Sequenced } from './tracer/record-sequencer.js';
import { REORDER_WINDOW, ReorderWindow, type ReorderWindowOptions } from './tracer/reorder-window.js';
import type { CaptureMode, TracerFrame, TracerLineError } from '../bpf/index.js';
import type { CollectorEvent, LostRecordsCause } from './types.js';

/** A loss is taken to have happened at most this long (kernel µs) before its notice arrived… */
const LOSS_LOOKBACK_MIN_US = 2_000_000;
/** …or this many times the largest recent arrival lag, when the tracer lags further behind. */
const LOSS_LOOKBACK_LAG_FACTOR = 3;

/** A call still running (its exit not seen): what the liveness sweep checks against /proc. */
export interface RunningCall {
  readonly id: string;
  readonly pid: number;
  readonly start: string;
  /** When it started, µs since the epoch. */
  readonly startedAtUs: number;
}

/** What the calls assembled so far add up to (the collector's stats). */
export interface CallStats {
  readonly openCalls: number;
  /** When the oldest call still running (started, no exit seen) started, µs since the epoch; null when none is. */
  readonly oldestRunningStartUs: number | null;
  readonly callsStarted: number;
  readonly callsFinished: number;
  readonly records: number;
  /** Records no call took: their process never became known, or was let go before they came. */
  readonly unattributed: number;
  /** Chunk lines no frame waited for (their header lost, or given up on). */
  readonly strayChunks: number;
  /** Calls published marked lostRecords, by why (the first cause each). */
  readonly callsMarked: Readonly<Record<LostRecordsCause, number>>;
}

export class RecordFlow {
  private readonly procs: ProcessTable;
  private readonly assembler: CallAssembler;
  private readonly merger: RecordMerger;
  private readonly sequencer: RecordSequencer;
  /** One framer per tracer run, by its source id. */
  private readonly framers = new Map<number, RecordFramer>();
  /** Kernel time (µs) of the newest record handed to the assembler: how far the call state is up to date. */
  releasedTs = 0;
  private readonly framed: Framed[] = [];
  private readonly released: Sequenced[] = [];
  private readonly merged: TracerFrame[] = [];
  private readonly cut: number[] = [];
  private nowMs = 0;

  constructor(
    private readonly assemblerOptions: AssemblerOptions,
    initial: { src: number | null; mode: CaptureMode },
    /** Where the calls' events go (publish). */
    emit: (event: CollectorEvent) => void,
    window: ReorderWindowOptions = REORDER_WINDOW,
  ) {
    // One process table: the assembler writes it, the merger reads each tree's payload tracer from it.
    this.procs = new ProcessTable(initial);
    this.assembler = new CallAssembler({ ...assemblerOptions, captureMode: initial.mode }, emit, this.procs);
    this.merger = new RecordMerger(this.procs);
    this.sequencer = new RecordSequencer(new ReorderWindow(window));
  }

  /**
   * One line from tracer `src` as bpftrace printed it, arrived at `arrivalUs`
   * (kernel monotonic µs). Returns why it is malformed (it is then dropped),
   * or null.
   */
  push(line: Buffer, src: number, arrivalUs: number, nowMs: number): TracerLineError | null {
    this.nowMs = nowMs;
    const framed = this.framed;
    framed.length = 0;
    const error = this.framer(src).pushLine(line, arrivalUs, framed);
    if (framed.length === 0) return error;
    this.order(src, framed);
    this.assembleReleased();
    return error;
  }

  /** What the reorder window has passed by the stream (it shrinks as lags age out), and held ends due. */
  releaseDue(monoUs: number, nowMs: number): void {
    this.nowMs = nowMs;
    const expired: TracerFrame[] = [];
    this.cut.length = 0;
    this.merger.expire(monoUs, expired, this.cut);
    this.assemble(expired);
    this.closeStaleFrames(monoUs);
    if (this.sequencer.heldCount === 0) return;
    this.sequencer.releaseDue(monoUs, this.openTs(), this.released);
    this.assembleReleased();
  }

  /** What the clock has passed (every line printed before `monoUs` has been pushed). */
  releaseByClock(monoUs: number, nowMs: number): void {
    this.nowMs = nowMs;
    this.closeStaleFrames(monoUs);
    this.sequencer.releaseByClock(monoUs, this.openTs(), this.released);
    this.assembleReleased();
  }

  /** The tracers went quiet as of `monoUs`: what is held goes on, but for what frames whose chunk lines are still coming must come before. */
  releaseQuiet(monoUs: number, nowMs: number): void {
    this.nowMs = nowMs;
    this.closeStaleFrames(monoUs);
    this.sequencer.releaseAll(monoUs, this.openTs(), this.released);
    this.assembleReleased();
  }

  /** Everything held goes on, frames still waiting for lines cut: no tracer has anything earlier left to send. */
  releaseAll(nowMs: number): void {
    this.nowMs = nowMs;
    for (const [src, framer] of this.framers) this.closeFrames(src, framer, Infinity);
    this.sequencer.releaseAll(0, Infinity, this.released);
    this.assembleReleased();
  }

  /** The assembler's timers: calls whose waits are over are published. */
  tick(nowMs: number): void {
    this.nowMs = nowMs;
    // What is held before the assembler (in order, being put together, or an end held for its payload tracer's copy): a call that ended after it waits.
    this.assembler.tick(nowMs, Math.min(this.sequencer.oldestHeldTs, this.openTs(), this.merger.oldestHeldTs));
  }

  /**
   * Tracer `src` ended: the calls whose bytes it may not have printed are marked (when it was stopped on
   * purpose, those certainly still in flight).
   */
  sourceGone(src: number, unexpected: boolean, nowMs: number): void {
    this.nowMs = nowMs;
    const released: TracerFrame[] = [];
    const { cut, inFlight } = this.merger.sourceGone(src, released);
    // Its lines are all read (bpftrace is gone): what it still had open goes on cut, and it needs no framer any more.
    const framer = this.framers.get(src);
    if (framer) {
      this.closeFrames(src, framer, Infinity);
      this.framers.delete(src);
      this.sequencer.releaseDue(0, this.openTs(), this.released);
      this.assembleReleased();
    }
    // A tracer stopped on purpose (retired after a mode switch) once its calls were published may still have
    // had one in flight: a call whose exec was on its way when that was checked. Its bytes end here too.
    for (const pid of unexpected ? cut : inFlight) this.assembler.markLostRecords(pid);
    this.cut.length = 0;
    this.assemble(released);
  }

  /**
   * Calls that start from kernel time `fromTs` on take their payloads from tracer `src` (null: none does,
   * they are recorded as `mode` calls without payloads); calls already running keep the tracer they had.
   */
  setPayloadSource(src: number | null, mode: CaptureMode, fromTs: number): void {
    this.procs.setPayloadSource(src, mode, fromTs);
  }

  /** The plugin process `pid` (started at `start`) is gone without its exit record: its call ends incomplete. */
  processGone(pid: number, start: string, reason: string): void {
    this.assembler.processGone(pid, start, reason);
  }

  /** Ends every open call (no tracer is left to end them): those still running are published incomplete; how many. */
  endAllCalls(reason: string): number {
    return this.assembler.endAllCalls(reason);
  }

  runningCalls(): readonly RunningCall[] {
    return this.assembler.runningCalls();
  }

  /** Every live process the calls are followed through: a starting tracer counts them as traced. */
  livePids(): readonly number[] {
    return this.assembler.livePids();
  }

  /** Whether a call that started before `epochUs` is not published yet (its bytes may still come from its tracer). */
  hasOpenCallStartedBefore(epochUs: number): boolean {
    return this.assembler.hasOpenCallStartedBefore(epochUs);
  }

  /** The reorder window (µs) at kernel time `monoUs`, and the largest recent arrival lag it follows. */
  reorderState(monoUs: number): { windowUs: number; maxLagUs: number } {
    const window = this.sequencer.window;
    return { windowUs: window.windowUs(monoUs), maxLagUs: window.maxLagUs(monoUs) };
  }

  stats(): CallStats {
    const c = this.assembler.counters;
    let oldestRunningStartUs: number | null = null;
    for (const call of this.assembler.runningCalls()) if (oldestRunningStartUs === null || call.startedAtUs < oldestRunningStartUs) oldestRunningStartUs = call.startedAtUs;
    let strayChunks = 0;
    for (const framer of this.framers.values()) strayChunks += framer.strayChunks;
    return {
      openCalls: this.assembler.openCallCount,
      oldestRunningStartUs,
      callsStarted: c.callsStarted,
      callsFinished: c.callsFinished,
      records: c.records,
      unattributed: c.unattributed,
      strayChunks,
      callsMarked: { ...c.callsMarked },
    };
  }

  /** When (kernel µs) the oldest held frame is due by the clock; null when none waits for it. */
  clockDueUs(monoUs: number): number | null {
    return this.sequencer.clockDueUs(monoUs, this.openTs());
  }

  /** Frames held: in order, or still being put together. */
  get heldCount(): number {
    let n = this.sequencer.heldCount;
    for (const framer of this.framers.values()) n += framer.openCount;
    return n;
  }

  /** What tracer run `src` proved by its lines so far (its canary); nothing before its first line. */
  canaryProof(src: number): CanaryProof {
    return this.framers.get(src)?.canary ?? NO_PROOF;
  }

  /** A tracer lost records (its notice came at `arrivalUs`): the calls alive meanwhile are marked, and the ends held for its copy go on. */
  private lost(count: number, src: number, arrivalUs: number): void {
    const lookback = Math.max(LOSS_LOOKBACK_MIN_US, LOSS_LOOKBACK_LAG_FACTOR * this.sequencer.window.maxLagUs(arrivalUs));
    const window = { fromTs: arrivalUs - lookback, toTs: arrivalUs };
    this.assembler.recordsLost(count, window, this.nowMs);
    const released: TracerFrame[] = [];
    this.cut.length = 0;
    this.merger.sourceLost(src, window, released, this.cut);
    this.assemble(released);
  }

  private framer(src: number): RecordFramer {
    let framer = this.framers.get(src);
    if (!framer) {
      framer = new RecordFramer(this.assemblerOptions.isOwnCanary);
      this.framers.set(src, framer);
    }
    return framer;
  }

  /**
   * Order: frames of tracer `src` into the sequencer, held behind any frame still being put together. A loss
   * notice at once, after the run's open frames go on cut: the lines they wait for may be among those lost.
   */
  private order(src: number, framed: readonly Framed[]): void {
    let openTs = this.openTs();
    for (const f of framed) {
      if (f.frame.kind !== 'lost') {
        this.sequencer.push(f.frame, src, f.arrivalUs, openTs, this.released);
        continue;
      }
      const framer = this.framers.get(src);
      if (framer && framer.openCount > 0) {
        const cut: Framed[] = [];
        framer.closeAll(cut);
        this.order(src, cut);
        openTs = this.openTs();
      }
      this.lost(f.frame.count, src, f.arrivalUs);
    }
  }

  /** The timestamp of the oldest frame still being put together: nothing at or after it goes on before it. */
  private openTs(): number {
    let oldest = Infinity;
    for (const framer of this.framers.values()) if (framer.openCount > 0) oldest = Math.min(oldest, framer.oldestOpenTs());
    return oldest;
  }

  /** Frames that waited FRAME_WAIT_US for lines that do not come go on, cut. */
  private closeStaleFrames(monoUs: number): void {
    for (const [src, framer] of this.framers) if (framer.openCount > 0) this.closeFrames(src, framer, monoUs);
  }

  private closeFrames(src: number, framer: RecordFramer, monoUs: number): void {
    const framed = this.framed;
    framed.length = 0;
    if (monoUs === Infinity) framer.closeAll(framed);
    else framer.closeStale(monoUs, FRAME_WAIT_US, framed);
    if (framed.length > 0) this.order(src, framed);
  }

  /** Dedupe, then assemble: the frames the sequencer released, through the merger into the assembler, one at a time. */
  private assembleReleased(): void {
    const released = this.released;
    if (released.length === 0) return;
    const merged = this.merged;
    for (const { frame, src } of released) {
      merged.length = 0;
      this.cut.length = 0;
      this.merger.pass(frame, src, merged, this.cut);
      this.assemble(merged);
    }
    released.length = 0;
    merged.length = 0;
  }

  private assemble(frames: readonly TracerFrame[]): void {
    for (const frame of frames) {
      if ('ts' in frame && frame.ts !== undefined && frame.ts > this.releasedTs) this.releasedTs = frame.ts;
      // Its payload tracer died (or never sent its copy of this end) while it ran: marked while its call is still open.
      if ((frame.kind === 'exit' || frame.kind === 'thread-exit') && frame.pid !== undefined && this.cut.includes(frame.pid)) this.assembler.markLostRecords(frame.pid);
      this.assembler.push(frame, this.nowMs);
    }
  }
}

const NO_PROOF: CanaryProof = Object.freeze({ execs: 0, writesRight: 0, writesWrong: 0 });
