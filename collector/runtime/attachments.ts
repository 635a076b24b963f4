/**
 * What the node holds for each attachment (a container's interface on a
 * network): libcni's cache entry and host-local's reservations, merged into
 * one record per attachment, whichever of them is left. The daemon builds it
 * from the store's rows, `cnirec gc` from the files themselves. Pure.
 */

import type { CacheEntry, IpAllocation } from '../cache/index.js';
import type { PodRef } from '../types.js';

/** The pod an attachment's args name (K8S_POD_NAMESPACE, K8S_POD_NAME). */
export type AttachmentPod = Pick<PodRef, 'namespace' | 'name'>;

/** A libcni cache entry, as much of it as leaks need. */
export interface CachedAttachment {
  readonly path: string;
  readonly containerId: string;
  readonly network: string | null;
  readonly ifName: string | null;
  readonly netns: string | null;
  readonly ips: readonly string[];
  /** From its K8S_POD_* args: a kubelet's runtime made it. */
  readonly pod: AttachmentPod | null;
  /** When libcni wrote it. */
  readonly writtenAtMs: number;
}

/** A host-local reservation `<dir>/<network>/<ip>`. */
export interface Reservation {
  readonly path: string;
  readonly ip: string;
  readonly network: string;
  readonly containerId: string;
  /** Older host-local files hold only the container id. */
  readonly ifName: string | null;
  readonly reservedAtMs: number;
}

export interface NodeAttachment {
  /** containerId, network and ifName: one finding per attachment. */
  readonly key: string;
  readonly containerId: string;
  readonly network: string | null;
  readonly ifName: string | null;
  /** Every address it holds: the cached result's and host-local's, once each. */
  readonly addresses: readonly string[];
  readonly cachePath: string | null;
  readonly reservationPaths: readonly string[];
  readonly netns: string | null;
  readonly pod: AttachmentPod | null;
  /** When it was made: the cache file's mtime, else the oldest reservation's. */
  readonly attachedAtMs: number;
}

export const attachmentKey = (containerId: string, network: string | null, ifName: string | null): string => `${containerId}/${network ?? '?'}/${ifName ?? '?'}`;

interface Building {
  containerId: string;
  network: string | null;
  ifName: string | null;
  addresses: string[];
  cachePath: string | null;
  reservationPaths: string[];
  netns: string | null;
  pod: AttachmentPod | null;
  attachedAtMs: number;
}

/**
 * One record per attachment. A reservation joins the cache entry of its container, network and interface
 * (any interface of that container and network when host-local did not write one); `podOf` names the pod of a
 * container whose cache entry is gone (the daemon knows it from the recorded calls).
 */
export function mergeAttachments(entries: readonly CachedAttachment[], reservations: readonly Reservation[], podOf: (containerId: string) => AttachmentPod | null = () => null): NodeAttachment[] {
  const byKey = new Map<string, Building>();
  for (const e of entries) {
    const key = attachmentKey(e.containerId, e.network, e.ifName);
    // Two files of one attachment (results and multus's results): one record, both addresses.
    const b = byKey.get(key);
    if (b) {
      for (const ip of e.ips) if (!b.addresses.includes(ip)) b.addresses.push(ip);
      continue;
    }
    byKey.set(key, { containerId: e.containerId, network: e.network, ifName: e.ifName, addresses: [...e.ips], cachePath: e.path, reservationPaths: [], netns: e.netns, pod: e.pod, attachedAtMs: e.writtenAtMs });
  }
  for (const r of reservations) {
    let b = byKey.get(attachmentKey(r.containerId, r.network, r.ifName));
    if (!b && r.ifName === null) b = [...byKey.values()].find((x) => x.containerId === r.containerId && x.network === r.network);
    if (!b) {
      b = { containerId: r.containerId, network: r.network, ifName: r.ifName, addresses: [], cachePath: null, reservationPaths: [], netns: null, pod: null, attachedAtMs: r.reservedAtMs };
      byKey.set(attachmentKey(r.containerId, r.network, r.ifName), b);
    }
    if (!b.addresses.includes(r.ip)) b.addresses.push(r.ip);
    b.reservationPaths.push(r.path);
    if (b.cachePath === null) b.attachedAtMs = Math.min(b.attachedAtMs, r.reservedAtMs);
  }
  return [...byKey.values()]
    .map((b) => ({ ...b, key: attachmentKey(b.containerId, b.network, b.ifName), pod: b.pod ?? podOf(b.containerId) }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

/** A cache file as the cache readers decode it → what leaks need; null for a file naming no container (legacy). */
export function cachedAttachmentOf(e: Pick<CacheEntry, 'path' | 'format' | 'containerId' | 'networkName' | 'ifName' | 'netns' | 'ips' | 'pod' | 'mtimeMs'>): CachedAttachment | null {
  if (e.format !== 'cniCacheV1' || !e.containerId) return null;
  return {
    path: e.path,
    containerId: e.containerId,
    network: e.networkName,
    ifName: e.ifName,
    netns: e.netns,
    ips: e.ips,
    pod: e.pod ? { namespace: e.pod.namespace, name: e.pod.name } : null,
    writtenAtMs: e.mtimeMs,
  };
}

/** A host-local file → a reservation; null when it names no container (an empty file). */
export function reservationOf(a: IpAllocation): Reservation | null {
  return a.containerId ? { path: a.path, ip: a.ip, network: a.network, containerId: a.containerId, ifName: a.ifName, reservedAtMs: a.mtimeMs } : null;
}
