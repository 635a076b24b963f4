/**
 * Which running calls to give up on: the tracer may never report a plugin's
 * exit (it lost the record, or it was restarting), so the calls still
 * running are checked against the processes alive. Pure: the times, what the
 * records handed on have reached and whether a process lives are arguments
 * (liveness.ts reads them; the busy-node simulation drives this with its own).
 *
 * A process found gone is given up on only once the records handed on have
 * moved past the moment it was found gone (by `gonePastUs`): until then its
 * exit may still be in the tracer's backlog.
 */

import type { RunningCall } from './record-flow.js';

export interface LivenessSweepOptions {
  /** Calls younger than this (µs) are not checked: an exit of theirs is most likely still on its way. */
  readonly minAgeUs: number;
  /** How far (kernel µs) the records handed on must pass the moment a process was found gone. */
  readonly gonePastUs: number;
}

/**
 * The daemon's settings (the busy-node simulation runs the same): calls
 * younger than 2 s are not checked against /proc, an exit of theirs most
 * likely still on its way; and the records handed on must have passed the
 * moment a plugin was found gone by 5 s before its exit is taken to be lost:
 * one CPU's buffer can be read seconds after another's under load, and its
 * exit with it (a busy node had calls marked incomplete whose exit came late).
 */
export const DAEMON_SWEEP: LivenessSweepOptions = { minAgeUs: 2_000_000, gonePastUs: 5_000_000 };

export interface SweepMoment {
  /** Now, µs since the epoch (calls' start times are on this clock). */
  readonly epochUs: number;
  /** Now, kernel monotonic µs (the records' clock). */
  readonly monoUs: number;
  /** Kernel time (µs) of the newest record handed to the assembler. */
  readonly releasedTs: number;
}

export interface SweepResult {
  /** Calls whose process is gone and whose exit can no longer come: to end incomplete. */
  readonly gone: readonly RunningCall[];
  /** Some gone process's exit may still come: the stream must move on (a canary exec moves it on an idle node). */
  readonly waiting: boolean;
}

export class LivenessSweep {
  /** When (kernel µs) each call's process was first found gone, by `pid:start`. */
  private readonly goneSince = new Map<string, number>();

  constructor(private readonly opts: LivenessSweepOptions) {}

  sweep(running: readonly RunningCall[], now: SweepMoment, isAlive: (pid: number, start: string) => boolean): SweepResult {
    const gone: RunningCall[] = [];
    let waiting = false;
    const open = new Set<string>();
    for (const call of running) {
      const key = `${call.pid}:${call.start}`;
      open.add(key);
      if (now.epochUs - call.startedAtUs < this.opts.minAgeUs || isAlive(call.pid, call.start)) continue;
      const since = this.goneSince.get(key);
      if (since === undefined) {
        this.goneSince.set(key, now.monoUs);
        waiting = true;
      } else if (now.releasedTs > since + this.opts.gonePastUs) {
        this.goneSince.delete(key);
        gone.push(call);
      } else {
        waiting = true;
      }
    }
    for (const key of this.goneSince.keys()) if (!open.has(key)) this.goneSince.delete(key);
    return { gone, waiting };
  }
}
