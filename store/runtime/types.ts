/** The runtime's side as the store keeps it: its conditions with since when, their transitions, its sandboxes. */

import type { GcPlanItem, RuntimeCondition, RuntimeProblem, RuntimeSandbox, RuntimeVersion } from '../../collector/index.js';

/** cnirec's own row in the timeline: whether the runtime answered (reason: `Answering`, or why not: a RuntimeProblemKind). */
export const REACHABLE = 'Reachable';

/** A condition as the runtime reports it now, with since when it says so. */
export interface ConditionState extends RuntimeCondition {
  readonly sinceMs: number;
}

/** A condition changed (type, status, reason or message), or the runtime started or stopped answering (type `Reachable`). */
export interface RuntimeTransition {
  readonly id: number;
  readonly atMs: number;
  readonly endpoint: string | null;
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

/** A sandbox as the runtime last reported it, kept after it goes. */
export interface StoredSandbox extends RuntimeSandbox {
  readonly firstSeenMs: number;
  /** The last poll that listed it. */
  readonly seenAtMs: number;
  /** The first poll that no longer listed it; null while listed. */
  readonly goneAtMs: number | null;
}

/** Whether leaks are being judged now, and what is found. */
export interface LeakStatus {
  readonly judging: boolean;
  /** Why not, when not. */
  readonly why: string | null;
  readonly confirmed: number;
  /** Missed by one list, waiting for the second. */
  readonly suspected: number;
  readonly lastJudgedAtMs: number | null;
}

/**
 * Where a view read back from a record comes from (an opened bundle): the node and the time the bundle was
 * taken, and what said how the runtime was then — `daemon`: the daemon's own view; `runtime`: the runtime
 * asked by `cnirec bundle` itself (no daemon answered); `record`: the record's transitions alone.
 */
export interface RecordedOrigin {
  readonly atMs: number;
  readonly node: string;
  readonly from: 'daemon' | 'runtime' | 'record';
}

export interface RuntimeView {
  /** The socket asked; null before it is found (or when off). */
  readonly endpoint: string | null;
  /** false also while off (`problem.kind` says `off`). */
  readonly reachable: boolean;
  readonly version: RuntimeVersion | null;
  /** As last reported (kept while the runtime does not answer), each with since when. */
  readonly conditions: readonly ConditionState[];
  /** Newest first. */
  readonly transitions: readonly RuntimeTransition[];
  readonly lastCheckedAtMs: number | null;
  readonly problem: RuntimeProblem | null;
  readonly answeringSinceMs: number | null;
  readonly leaks: LeakStatus;
  /** Set when read from a record (an opened bundle), not kept live: as it was then, never about the machine serving it. */
  readonly recorded?: RecordedOrigin;
}

/** What the runtime tracker publishes: a change of the runtime's readiness (a condition, or whether it answers). */
export interface RuntimeReadinessEvent {
  readonly type: 'change';
  readonly view: RuntimeView;
}

export interface RuntimeReadinessListener {
  onRuntimeReadiness(event: RuntimeReadinessEvent): void;
}

/** `GET /api/v1/node/cni/gc-plan`: what a GC would free now. */
export interface GcPlan {
  readonly endpoint: string | null;
  readonly reachable: boolean;
  readonly judging: boolean;
  readonly why: string | null;
  readonly items: readonly GcPlanItem[];
  readonly suspected: number;
  readonly judgedAtMs: number | null;
  /** Set when read from a record (an opened bundle): the plan as the daemon judged it then. */
  readonly recorded?: RecordedOrigin;
}
