/**
 * The container runtime on /healthz: which socket, whether it answers, why
 * not, when it was last asked. A runtime that is absent, stopped, restarting
 * or hung is the node's state, not cnirec's: calls are still recorded and the
 * kubelet sees the same, so it does not make the daemon degraded (the fleet's
 * alert on cnirec_runtime_reachable says it). cnirec's own setup that keeps
 * it from asking a runtime that is there — the socket may not be opened, or
 * --cri-endpoint names something that is no CRI runtime — does. Pure.
 */

import { isoFromMs } from '../../lib/index.js';
import type { RuntimeProblemKind } from '../../collector/index.js';
import type { RuntimeView } from '../../store/index.js';

/** What only cnirec's own setup can cause, and only its operator can fix. */
const CNIREC_SETUP_KINDS: ReadonlySet<RuntimeProblemKind> = new Set(['denied', 'not-cri']);

export interface RuntimeHealth {
  readonly endpoint: string | null;
  /** false also while off (errorKind `off`) or not asked yet (lastCheckedAt null). */
  readonly reachable: boolean;
  readonly errorKind: RuntimeProblemKind | null;
  readonly error: string | null;
  readonly lastCheckedAt: string | null;
  readonly lastCheckedAgeMs: number | null;
  readonly answeringSince: string | null;
}

export function runtimeHealth(v: RuntimeView, nowMs: number): RuntimeHealth {
  return {
    endpoint: v.endpoint,
    reachable: v.reachable,
    errorKind: v.problem?.kind ?? null,
    error: v.problem?.message ?? null,
    lastCheckedAt: v.lastCheckedAtMs === null ? null : isoFromMs(v.lastCheckedAtMs),
    lastCheckedAgeMs: v.lastCheckedAtMs === null ? null : Math.max(0, nowMs - v.lastCheckedAtMs),
    answeringSince: v.answeringSinceMs === null ? null : isoFromMs(v.answeringSinceMs),
  };
}

/** Why the runtime's side makes the daemon degraded: only a setup of cnirec's that keeps it from asking. */
export function runtimeProblems(v: RuntimeView | null): string[] {
  const p = v?.problem;
  if (!p || !CNIREC_SETUP_KINDS.has(p.kind)) return [];
  return [`The container runtime cannot be asked: ${p.message.replace(/\.$/, '')}. The runtime's readiness and leaked attachments are not followed until this is fixed; calls are still recorded.`];
}
