/**
 * The collector's canary: `echo` exec'd with CNI_COMMAND set to
 * CANARY_COMMAND. Seeing it proves the tracer records execs (readiness) and
 * moves the tracer's stream forward on an idle node; it is never a call. Its
 * one write of CANARY_OUTPUT (to /dev/null) is a known payload: seeing it
 * with the right bytes proves full mode's payload probes read the right
 * registers (see TracerRun's start-up check).
 *
 * Its pids are remembered because its environment may not be seen: bpftrace
 * attaches its exec probes one at a time, so while it starts, the probe that
 * prints an exec's header can be attached before the one that prints its
 * environment. A canary caught in between would otherwise be stored as a
 * call of `true` with no command that never ends.
 */

import { spawn } from 'node:child_process';
import { CANARY_COMMAND, CANARY_OUTPUT } from './canary-marks.js';

/** Long after its last record can arrive (the reorder window is at most 2 s, a flood's lag tens of seconds). */
const FORGET_AFTER_EXIT_MS = 60_000;

/** This process's canaries: pid → when to forget it (Infinity while it runs). Per process, as pids are. */
const canaries = new Map<number, number>();

/** Execs one canary; its pid, or undefined when it could not be started. */
export function runCanary(): number | undefined {
  const child = spawn('echo', [CANARY_OUTPUT.trimEnd()], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CNI_COMMAND: CANARY_COMMAND }, stdio: 'ignore' });
  child.on('error', () => undefined);
  const pid = child.pid;
  if (pid === undefined) return undefined;
  canaries.set(pid, Infinity);
  child.on('exit', () => canaries.set(pid, Date.now() + FORGET_AFTER_EXIT_MS));
  return pid;
}

/** Whether the exec of `pid` (by `ppid`) is one of this process's canaries, whatever its environment showed. */
export function isOwnCanary(pid: number, ppid: number): boolean {
  const now = Date.now();
  for (const [p, forgetAt] of canaries) if (forgetAt <= now) canaries.delete(p);
  return ppid === process.pid && canaries.has(pid);
}
