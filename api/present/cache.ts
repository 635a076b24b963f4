/**
 * Stored cache entries and IP holdings → the cache routes' JSON (times ISO
 * 8601, like the call routes); the file part of an entry is shared with the
 * live tail's cache messages.
 */

import type { z } from 'zod';
import { isoFromMs } from '../../lib/index.js';
import type { CacheEntryFields, StoredCacheEntry, StoredIpHolding } from '../../store/index.js';
import type { cacheEntrySchema, ipHoldingSchema } from '../schemas/cache.js';
import { isoFromMsOrNull } from './time.js';

type CacheFileFields = 'path' | 'format' | 'containerId' | 'networkName' | 'ifName' | 'netns' | 'podNamespace' | 'podName' | 'podUid' | 'ips';

/** What every view of a cache entry (REST and the live tail) shows of the file: where it is and what it attaches. */
export function presentCacheFile(f: Pick<CacheEntryFields, CacheFileFields>) {
  return {
    path: f.path,
    format: f.format,
    containerId: f.containerId,
    networkName: f.networkName,
    ifName: f.ifName,
    netns: f.netns,
    pod: f.podName === null ? null : { namespace: f.podNamespace, name: f.podName, uid: f.podUid },
    ips: [...f.ips],
  };
}

export function presentCacheEntry(e: StoredCacheEntry): z.input<typeof cacheEntrySchema> {
  return {
    id: e.id,
    ...presentCacheFile(e),
    cniArgs: e.cniArgs.map(([k, v]) => [k, v] as [string, string]),
    capabilityArgs: e.capabilityArgs,
    config: e.config,
    configProblem: e.configProblem,
    result: e.result,
    fileMtime: isoFromMs(e.fileMtimeMs),
    firstSeen: isoFromMs(e.firstSeenMs),
    lastSeen: isoFromMs(e.lastSeenMs),
    supersededAt: isoFromMsOrNull(e.supersededAtMs),
    removedAt: isoFromMsOrNull(e.removedAtMs),
    addCallId: e.addCallId,
    delCallId: e.delCallId,
    redacted: e.redactions.length > 0,
    redactedPointers: [...e.redactions],
  };
}

export function presentIpHolding(h: StoredIpHolding): z.input<typeof ipHoldingSchema> {
  return {
    network: h.network,
    containerId: h.containerId,
    ifName: h.ifName,
    pod: h.podName === null ? null : { namespace: h.podNamespace, name: h.podName },
    source: h.source,
    path: h.path,
    from: isoFromMs(h.fromMs),
    to: isoFromMsOrNull(h.toMs),
  };
}
