/**
 * Pod attribution for a cache entry. libcni stores CNI_ARGS already split
 * into [key, value] pairs; the same K8S_POD_* rule as for calls applies, so
 * a cache entry and the calls that made it name the same pod.
 */

import type { PodRef } from '../types.js';

export function podFromCacheArgs(pairs: readonly (readonly [string, string])[]): PodRef | null {
  const args = new Map<string, string>();
  for (const [k, v] of pairs) args.set(k.trim(), v);
  const namespace = args.get('K8S_POD_NAMESPACE');
  const name = args.get('K8S_POD_NAME');
  // A name without a namespace (podman sets only K8S_POD_NAME) is not a Kubernetes pod.
  if (!namespace || !name) return null;
  return {
    namespace,
    name,
    uid: args.get('K8S_POD_UID') || null,
    infraContainerId: args.get('K8S_POD_INFRA_CONTAINER_ID') || null,
  };
}
