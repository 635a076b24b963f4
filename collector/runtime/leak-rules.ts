/**
 * Which attachments the runtime confirms leaked: their container id is not a
 * sandbox the runtime lists. Pure: the attachments, the runtime's list and
 * what was suspected before in; verdicts and the suspicions to keep out.
 *
 * Judged only when a wrong "leaked" is unlikely:
 * - the runtime answered this poll's list, and has answered every poll for
 *   `startGraceMs` (a runtime that has just started may list its sandboxes
 *   before it has recovered them all; cnirec's own start counts the same);
 * - the attachment is the kubelet's runtime's: its args name a pod (K8S_POD_*,
 *   which containerd and CRI-O pass; podman and cnitool do not, and their
 *   containers are no CRI sandboxes);
 * - it is older than `minAgeMs` (the runtime lists a sandbox only once
 *   RunPodSandbox returns, after every network's ADD: a fresh cache file may
 *   belong to a sandbox still being made);
 * - a list at least `confirmAfterMs` after the first that missed it misses it
 *   again (checked twice, some seconds apart).
 * A sandbox the runtime lists, ready or not, is never leaked: the kubelet
 * will stop it, and its DEL runs then.
 */

import type { NodeAttachment } from './attachments.js';

export interface LeakTiming {
  /** A second list this long after the first that missed an attachment confirms it. */
  readonly confirmAfterMs: number;
  /** The runtime must have answered every poll this long before anything is judged. */
  readonly startGraceMs: number;
  /** Younger attachments are not judged. */
  readonly minAgeMs: number;
}

/** From the poll interval: 5 s gives 10 s between the two checks, 15 s of grace and one minute of age. */
export const leakTimingFor = (pollIntervalMs: number): LeakTiming => ({
  confirmAfterMs: 2 * pollIntervalMs,
  startGraceMs: 3 * pollIntervalMs,
  minAgeMs: 12 * pollIntervalMs,
});

/** The runtime's sandbox ids, as one ListPodSandbox answered them. */
export interface SandboxList {
  readonly atMs: number;
  readonly ids: ReadonlySet<string>;
}

export type LeakVerdict =
  /** The runtime lists its sandbox. */
  | 'live'
  /** Not the kubelet's runtime's (no pod in its args): the runtime cannot say; today's guess stands. */
  | 'not-runtime'
  | 'too-young'
  /** Missed by one list; the next after confirmAfterMs decides. */
  | 'suspect'
  | 'leaked';

export interface AttachmentVerdict {
  readonly attachment: NodeAttachment;
  readonly verdict: LeakVerdict;
  /** When a list first missed it (suspect, leaked). */
  readonly missingSinceMs: number | null;
}

export interface LeakJudgement {
  /** False when nothing could be judged (then `why` says why, and every verdict is of no use). */
  readonly judging: boolean;
  readonly why: string | null;
  readonly verdicts: readonly AttachmentVerdict[];
  /** Attachment key → when a list first missed it: hand back at the next judgement. */
  readonly suspects: ReadonlyMap<string, number>;
}

export function judgeLeaks(
  attachments: readonly NodeAttachment[],
  list: SandboxList | null,
  answeringSinceMs: number | null,
  suspects: ReadonlyMap<string, number>,
  timing: LeakTiming,
): LeakJudgement {
  const none = (why: string): LeakJudgement => ({ judging: false, why, verdicts: [], suspects: new Map() });
  if (list === null || answeringSinceMs === null) return none('the runtime cannot be asked for its sandboxes');
  if (list.atMs - answeringSinceMs < timing.startGraceMs) {
    return none(`the runtime has answered for ${Math.max(0, Math.round((list.atMs - answeringSinceMs) / 1000))} s only: a runtime that has just started may not list every sandbox yet`);
  }
  const next = new Map<string, number>();
  const verdicts = attachments.map((a): AttachmentVerdict => {
    if (a.pod === null) return { attachment: a, verdict: 'not-runtime', missingSinceMs: null };
    if (list.ids.has(a.containerId)) return { attachment: a, verdict: 'live', missingSinceMs: null };
    if (a.attachedAtMs > list.atMs - timing.minAgeMs) return { attachment: a, verdict: 'too-young', missingSinceMs: null };
    const since = suspects.get(a.key) ?? list.atMs;
    next.set(a.key, since);
    return { attachment: a, verdict: list.atMs - since >= timing.confirmAfterMs ? 'leaked' : 'suspect', missingSinceMs: since };
  });
  return { judging: true, why: null, verdicts, suspects: next };
}
