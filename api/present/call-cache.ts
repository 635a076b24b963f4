/**
 * Picks libcni's cache entry for one call out of every version stored for
 * its container. The linker ties an entry to one ADD only (with a chain, the
 * last plugin's, because libcni writes the file after the whole chain), so
 * the other calls of the same attachment are matched by container id,
 * ifname and network instead, nearest in time: bridge's ADD and portmap's ADD
 * of one chain both show the entry the chain produced.
 */

import { cacheFileWrittenAtMs, type StoredCacheEntry, type StoredCall } from '../../store/index.js';

type CallForCache = Pick<StoredCall, 'id' | 'parentId' | 'isVersionProbe' | 'containerId' | 'ifname' | 'startedAtUs'>;

export function cacheEntryForCall(call: CallForCache, network: string | null, entries: readonly StoredCacheEntry[]): StoredCacheEntry | null {
  const linked = entries.find((e) => e.addCallId === call.id || e.delCallId === call.id);
  if (linked) return linked;
  // Delegated calls (host-local under bridge) and VERSION probes are not what libcni caches.
  if (call.parentId !== null || call.isVersionProbe || call.containerId === null || call.ifname === null) return null;
  const startedMs = call.startedAtUs / 1000;
  const distance = (e: StoredCacheEntry) => Math.abs(cacheFileWrittenAtMs(e.fileMtimeMs, e.firstSeenMs) - startedMs);
  let best: StoredCacheEntry | null = null;
  for (const e of entries) {
    if (e.containerId !== call.containerId || e.ifName !== call.ifname) continue;
    // Without a network on either side (light capture, legacy file) container and ifname decide.
    if (network !== null && e.networkName !== null && e.networkName !== network) continue;
    if (best === null || distance(e) < distance(best)) best = e;
  }
  return best;
}

/** The conf/conflist "name" from a call's config, when it has one. */
export function networkOfConfig(config: unknown): string | null {
  if (typeof config !== 'object' || config === null) return null;
  const name = (config as Record<string, unknown>).name;
  return typeof name === 'string' ? name : null;
}
