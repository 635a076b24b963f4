/**
 * A parsed cache file as the store keeps it: the one mapping from the
 * watcher's entry to the stored fields, the pod flattened into its columns.
 * The writer encodes these into the row; the live tail presents them as the
 * REST routes present a stored version, so both show an entry alike.
 */

import type { CacheEntry, PodRef } from '../../collector/index.js';

/** The fields a stored version takes as they are from the parsed file (taken from its type so the two cannot drift). */
type ParsedFields = 'path' | 'dir' | 'format' | 'containerId' | 'networkName' | 'ifName' | 'netns' | 'ips' | 'cniArgs' | 'config' | 'configProblem' | 'result';

export interface PodColumns {
  readonly podNamespace: string | null;
  readonly podName: string | null;
  readonly podUid: string | null;
}

export interface CacheEntryFields extends Pick<CacheEntry, ParsedFields>, PodColumns {}

export function podColumns(pod: PodRef | null): PodColumns {
  return { podNamespace: pod?.namespace ?? null, podName: pod?.name ?? null, podUid: pod?.uid ?? null };
}

export function cacheEntryFields(e: CacheEntry): CacheEntryFields {
  return {
    path: e.path,
    dir: e.dir,
    format: e.format,
    containerId: e.containerId,
    networkName: e.networkName,
    ifName: e.ifName,
    netns: e.netns,
    ...podColumns(e.pod),
    ips: e.ips,
    cniArgs: e.cniArgs,
    config: e.config,
    configProblem: e.configProblem,
    result: e.result,
  };
}
