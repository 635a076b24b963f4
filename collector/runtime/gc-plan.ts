/**
 * What `cnirec gc` would free: the attachments the runtime confirms leaked,
 * each with whether a DEL can free it (libcni's GC DELs cached attachments
 * only: a reservation without its cache entry has no config to DEL with).
 * The daemon's `GET /api/v1/node/cni/gc-plan` and the command list the same
 * shape. Pure.
 */

import type { NodeAttachment } from './attachments.js';
import type { LeakJudgement } from './leak-rules.js';

export interface GcPlanItem extends NodeAttachment {
  /** When a list of the runtime first missed its sandbox. */
  readonly missingSinceMs: number;
  /** A DEL with libcni's cached config can free it. */
  readonly freeable: boolean;
  /** Why it cannot be freed by a DEL; null when it can. */
  readonly why: string | null;
}

export const NO_CACHE_ENTRY =
  "no libcni cache entry is left for it, so there is no config to DEL with (libcni's GC frees cached attachments only): once sure, release the address by removing the reservation file";

/** The confirmed leaks of a judgement; `cannotDel` says why a cached one cannot be DELeted (null: it can). */
export function gcPlanOf(judgement: LeakJudgement, cannotDel: (a: NodeAttachment) => string | null = () => null): GcPlanItem[] {
  return judgement.verdicts
    .filter((v) => v.verdict === 'leaked')
    .map((v) => {
      const why = v.attachment.cachePath === null ? NO_CACHE_ENTRY : cannotDel(v.attachment);
      return { ...v.attachment, missingSinceMs: v.missingSinceMs ?? 0, freeable: why === null, why };
    });
}
