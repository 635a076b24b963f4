/**
 * The linker's decisions apart from its queries (cache-links.ts): which
 * entries are worth linking at a moment, when a file counts as written,
 * whether a candidate call replaces a link, the findings' texts, and which
 * open findings have stopped being true. Pure: times are arguments.
 */

import type { FindingFields } from '../findings/index.js';

/**
 * How long after a file appears (or goes) before it is linked: longer than the collector can take to publish
 * a call (its reordering window, the grace after exit and the store's batching).
 */
export const SETTLE_MS = 3_000;
/**
 * How long a link stays open to a better candidate. On a loaded node the chain's last calls can reach the
 * store after SETTLE_MS (the tracer or the collector catching up): a link made meanwhile took an earlier
 * plugin of the chain, and a better candidate arriving within this time replaces it.
 */
export const RELINK_MS = 30_000;
/** Files found at startup are tried this long only: their ADD is either stored already or was never recorded. */
export const STARTUP_LINK_MS = 30_000;

/** The moments (ms) a link pass at `nowMs` compares entries with. */
export interface LinkWindow {
  /** Files written or removed since then are retried for their call. */
  readonly since: number;
  /** Files first seen since then (found at startup) are tried although older. */
  readonly briefly: number;
  /** Only files seen before then are linked: every call of their chain has normally been stored by now. */
  readonly settled: number;
  /** Links of files seen since then are looked at again. */
  readonly relink: number;
}

export const linkWindow = (nowMs: number, windowMs: number): LinkWindow => ({
  since: nowMs - windowMs,
  briefly: nowMs - STARTUP_LINK_MS,
  settled: nowMs - SETTLE_MS,
  relink: nowMs - RELINK_MS,
});

/** When libcni wrote the file: its mtime, or when it was first seen if the mtime is unknown. */
export const cacheFileWrittenAtMs = (fileMtimeMs: number, firstSeenMs: number): number => (fileMtimeMs > 0 ? fileMtimeMs : firstSeenMs);

/** The call to link now, or null: a candidate found that is not the call already linked. */
export const newLink = (candidate: { readonly id: string } | undefined, linked: string | null): string | null =>
  candidate !== undefined && candidate.id !== linked ? candidate.id : null;

/** The calls a detection pass at `nowMs` judges: those ended a grace period ago, within the window, and since the results were first read. */
export function detectionWindow(nowMs: number, graceMs: number, windowMs: number, watchedSinceMs: number): { readonly fromUs: number; readonly toUs: number } {
  return { fromUs: Math.max(watchedSinceMs, nowMs - windowMs) * 1000, toUs: (nowMs - graceMs) * 1000 };
}

/** Open findings whose condition is no longer found: to resolve. */
export const noLongerFound = (open: ReadonlySet<string>, found: ReadonlySet<string>): string[] => [...open].filter((s) => !found.has(s));

/** Where a finding's pod comes from: the rows it is found in. */
interface PodColumns {
  readonly pod_namespace: string | null;
  readonly pod_name: string | null;
}

export function staleEntryFinding(s: PodColumns & { readonly path: string; readonly container_id: string; readonly network_name: string | null; readonly del_id: string }): FindingFields {
  return {
    message: `cache entry ${s.path} is still there although DEL of container ${s.container_id} succeeded (call ${s.del_id}): the runtime will replay this stale state on the next DEL/CHECK; delete the file if the container is gone`,
    path: s.path,
    containerId: s.container_id,
    network: s.network_name,
    callId: s.del_id,
    podNamespace: s.pod_namespace,
    podName: s.pod_name,
  };
}

export function leakedIpFinding(l: PodColumns & { readonly path: string; readonly ip: string; readonly network: string | null; readonly container_id: string | null }): FindingFields {
  return {
    message: `host-local holds ${l.ip} in network ${l.network ?? '?'} for container ${l.container_id ?? '(none written)'}, which has no live CNI cache entry: the address is probably leaked (a DEL that never ran or failed); if the container is gone, delete ${l.path}`,
    path: l.path,
    ip: l.ip,
    network: l.network,
    containerId: l.container_id,
    podNamespace: l.pod_namespace,
    podName: l.pod_name,
  };
}

export function addWithoutCacheFinding(a: PodColumns & { readonly id: string; readonly container_id: string; readonly ifname: string; readonly network: string | null }): FindingFields {
  return {
    message: `ADD call ${a.id} for container ${a.container_id} (${a.ifname}${a.network ? `, network ${a.network}` : ''}) succeeded but no CNI cache file appeared after it: a later DEL will lack the cached result (a runtime that bypasses libcni's cache, a plugin run by hand, or a cache directory cnirec does not watch)`,
    containerId: a.container_id,
    network: a.network,
    callId: a.id,
    podNamespace: a.pod_namespace,
    podName: a.pod_name,
  };
}
