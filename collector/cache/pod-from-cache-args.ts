/**
 * Pod attribution for a cache entry. libcni stores CNI_ARGS already split
 * into [key, value] pairs; the same K8S_POD_* rule as for calls applies, so
 * a cache entry and the calls that made it name the same pod.
 */

import { podFromArgs } from '../assemble/index.js';
import type { PodRef } from '../types.js';

export function podFromCacheArgs(pairs: readonly (readonly [string, string])[]): PodRef | null {
  return podFromArgs(new Map(pairs.map(([k, v]) => [k.trim(), v] as const)));
}
