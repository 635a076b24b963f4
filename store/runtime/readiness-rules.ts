/**
 * The runtime's readiness as a timeline: a poll changes the timeline only
 * when a condition's type, status, reason or message differs from what was
 * last reported, or when the runtime starts or stops answering. Pure.
 */

import type { RuntimeSnapshot } from '../../collector/index.js';
import { REACHABLE, type ConditionState, type RuntimeTransition } from './types.js';

export type NewTransition = Omit<RuntimeTransition, 'id'>;

export interface ReadinessStep {
  /** By type, in the order the runtime reports them; unchanged when the runtime did not answer. */
  readonly conditions: ReadonlyMap<string, ConditionState>;
  readonly reachable: boolean;
  /** Oldest first. */
  readonly transitions: readonly NewTransition[];
}

const sameAnswer = (a: ConditionState, b: { status: boolean; reason: string; message: string }) => a.status === b.status && a.reason === b.reason && a.message === b.message;

/**
 * `known`: the conditions as last reported; `knownReachable`: whether the runtime answered last (null: never
 * answered). A runtime turned off (`--cri-endpoint none`), or never found, makes no timeline.
 */
export function readinessStep(known: ReadonlyMap<string, ConditionState>, knownReachable: boolean | null, s: RuntimeSnapshot): ReadinessStep {
  if (s.problem?.kind === 'off') return { conditions: known, reachable: false, transitions: [] };
  const transitions: NewTransition[] = [];
  // A runtime never found (a node without one) makes no timeline: there is no change to tell.
  if (knownReachable !== s.reachable && (knownReachable !== null || s.reachable)) {
    transitions.push({
      atMs: s.atMs,
      endpoint: s.endpoint,
      type: REACHABLE,
      status: s.reachable,
      reason: s.reachable ? 'Answering' : (s.problem?.kind ?? 'error'),
      message: s.reachable ? `${s.version ? `${s.version.name} ${s.version.version}` : 'the runtime'} answers at ${s.endpoint ?? '?'}` : (s.problem?.message ?? ''),
    });
  }
  if (!s.reachable || s.conditions === null) return { conditions: known, reachable: s.reachable, transitions };
  const conditions = new Map<string, ConditionState>();
  for (const c of s.conditions) {
    const before = known.get(c.type);
    if (before && sameAnswer(before, c)) {
      conditions.set(c.type, before);
      continue;
    }
    conditions.set(c.type, { ...c, sinceMs: s.atMs });
    transitions.push({ atMs: s.atMs, endpoint: s.endpoint, type: c.type, status: c.status, reason: c.reason, message: c.message });
  }
  return { conditions, reachable: true, transitions };
}
