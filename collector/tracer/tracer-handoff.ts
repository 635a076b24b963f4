/**
 * The main tracers of before a capture mode switch, each still supplying the
 * calls that started before its cutover until they are published, then
 * stopped. Several when switches come faster than calls end: stopping one
 * early would lose the last bytes of its calls.
 */

import type { Logger } from 'pino';
import type { TracerRun } from './tracer-run.js';

/** On stop, how long bpftrace may take to hand over what it recorded before the stop (out of the daemon's 5 s). */
export const STOP_DRAIN_MS = 1_000;
/** After draining a retiring tracer, how long (beyond the reorder window) the pipeline gets to pass on what it printed. */
const RETIRE_RECHECK_MS = 100;

/** What the handoff needs of the record pipeline. */
export interface HandoffCalls {
  /** Whether a call that started before `epochUs` is not published yet (its bytes may still come from its tracer). */
  hasOpenCallStartedBefore(epochUs: number): boolean;
  /** The reorder window now (µs): how long records wait for other CPUs' before they go on. */
  reorderState(): { windowUs: number };
}

interface Retiring {
  readonly run: TracerRun;
  readonly cutoverEpochUs: number;
  readonly deadline: number;
  /** Being drained before it stops (and before it is checked once more). */
  draining: boolean;
}

export class TracerHandoff {
  private retiring: Retiring[] = [];

  constructor(
    private readonly calls: HandoffCalls,
    /** A retired run stopped: its counters are kept. */
    private readonly onStopped: (run: TracerRun) => void,
    private readonly log: Logger,
  ) {}

  get runs(): TracerRun[] {
    return this.retiring.map((r) => r.run);
  }

  get inProgress(): boolean {
    return this.retiring.length > 0;
  }

  /** `run` keeps supplying the calls that started before `cutoverEpochUs` until they are published or `deadline` (Date.now()) passes. */
  add(run: TracerRun, cutoverEpochUs: number, deadline: number): void {
    this.retiring = [...this.retiring, { run, cutoverEpochUs, deadline, draining: false }];
  }

  /**
   * On every publish tick. The previous tracer stays until the calls it supplies are published: their last bytes
   * may still sit in one of its CPU buffers after their exit (a call is published once its exit's count of them came).
   */
  check(nowMs: number): void {
    for (const r of this.retiring) if (nowMs >= r.deadline || !this.calls.hasOpenCallStartedBefore(r.cutoverEpochUs)) void this.retire(r);
  }

  /** Whether `run` was one of them; it died, and is forgotten: the calls it supplied payloads for get no more (the merger reports them as they end, and they are marked). */
  forget(run: TracerRun): boolean {
    if (!this.retiring.some((r) => r.run === run)) return false;
    this.retiring = this.retiring.filter((r) => r.run !== run);
    return true;
  }

  /** The collector stops them itself. */
  clear(): void {
    this.retiring = [];
  }

  private async retire(which: Retiring): Promise<void> {
    if (!this.retiring.includes(which) || which.draining) return;
    const { run } = which;
    which.draining = true;
    // Whatever it recorded up to now goes into the pipeline before it stops. A call that started just before the
    // switch may have been on its way (in a CPU buffer, in the reorder window) when none was seen open: once its
    // exec is in, it keeps the tracer it takes its bytes from.
    await run.drain(STOP_DRAIN_MS);
    await new Promise((resolve) => setTimeout(resolve, RETIRE_RECHECK_MS + this.calls.reorderState().windowUs / 1000));
    if (!this.retiring.includes(which)) return;
    if (Date.now() < which.deadline && this.calls.hasOpenCallStartedBefore(which.cutoverEpochUs)) {
      which.draining = false;
      return;
    }
    this.retiring = this.retiring.filter((r) => r !== which);
    this.log.info({ mode: run.settings.mode }, 'previous tracer stopped after the mode switch');
    await run.stop();
    this.onStopped(run);
  }
}
