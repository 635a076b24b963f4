/**
 * The runtime section of `cnirec doctor --json` (and of a bundle's node/doctor.json): the daemon's view when
 * one answers (its timeline knows since when, and the leaks), else the runtime asked directly (no `since`, no
 * leaks). Pure: the asking is collector/runtime's askRuntimeOnce.
 */

import type { RuntimeAnswer } from '../../collector/index.js';
import type { RuntimeStatusBody } from '../schemas/runtime.js';

export interface DoctorRuntime {
  readonly source: 'daemon' | 'runtime';
  readonly endpoint: string | null;
  readonly reachable: boolean;
  readonly name: string | null;
  readonly version: string | null;
  readonly conditions: readonly { type: string; status: boolean; reason: string; message: string; since: string | null }[];
  readonly error: string | null;
  /** The endpoint was not set: a node without a runtime's socket (podman only) is no problem. */
  readonly looked: boolean;
  readonly leaks: RuntimeStatusBody['leaks'] | null;
}

/** `looked`: the endpoint was left to the usual sockets. */
export const doctorRuntimeFromDaemon = (r: RuntimeStatusBody, looked: boolean): DoctorRuntime => ({
  source: 'daemon',
  endpoint: r.endpoint,
  reachable: r.reachable,
  name: r.name,
  version: r.version,
  conditions: r.conditions,
  error: r.errorKind === 'off' ? null : r.error,
  looked: looked || r.errorKind === 'absent',
  leaks: r.leaks,
});

/** null when the runtime's side is off (--cri-endpoint none). */
export function doctorRuntimeFromAnswer(a: RuntimeAnswer, looked: boolean): DoctorRuntime | null {
  if (a.problem?.kind === 'off') return null;
  return {
    source: 'runtime',
    endpoint: a.endpoint,
    reachable: a.reachable,
    name: a.version?.name ?? null,
    version: a.version?.version ?? null,
    conditions: a.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message, since: null })),
    error: a.problem?.message ?? null,
    looked: looked && (a.reachable || a.problem?.kind === 'absent'),
    leaks: null,
  };
}
