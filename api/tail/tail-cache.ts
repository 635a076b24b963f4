/**
 * libcni cache changes as tail messages: `cache.added` when libcni wrote a
 * cache file (a rewrite is a new version, so it is announced the same way),
 * `cache.removed` when the file went away. The watcher's removal names only
 * the path, so the feed remembers the last version of every live file it was
 * told about (the watcher announces all of them at startup) to say what was
 * removed. Kept small: no config, which is the conflist libcni ran and
 * belongs to the REST view (/api/v1/cache).
 */

import type { CacheEntry, CacheEvent } from '../../collector/index.js';
import { cacheEntryFields } from '../../store/index.js';
import { isoFromMs } from '../../lib/index.js';
import { presentCacheFile } from '../present/cache.js';
import type { TailCacheEntry } from '../schemas/tail.js';
import type { TailFilter } from './tail-filter.js';

export type CacheEventType = 'cache.added' | 'cache.removed';

export type { TailCacheEntry };

export interface TailCacheMessage {
  readonly type: CacheEventType;
  readonly entry: TailCacheEntry;
}

export interface CacheFeed {
  /** The messages `events` make, in order; remembers live files for later removals. */
  messagesOf(events: readonly CacheEvent[]): TailCacheMessage[];
}


/** The entry as the REST routes show its stored version, plus where it was found and when. */
function live(e: CacheEntry, atMs: number): TailCacheEntry {
  const fields = cacheEntryFields(e);
  const { path, ...file } = presentCacheFile(fields);
  return {
    path,
    dir: fields.dir,
    ...file,
    result: fields.result,
    writtenAt: isoFromMs(e.mtimeMs),
    at: isoFromMs(atMs),
  };
}

export function createCacheFeed(): CacheFeed {
  const lastVersion = new Map<string, TailCacheEntry>();
  return {
    messagesOf(events) {
      const out: TailCacheMessage[] = [];
      for (const ev of events) {
        if (ev.type === 'cache.added' || ev.type === 'cache.changed') {
          const entry = live(ev.entry, ev.atMs);
          lastVersion.set(ev.entry.path, entry);
          out.push({ type: 'cache.added', entry });
        } else if (ev.type === 'cache.removed') {
          const last = lastVersion.get(ev.path);
          lastVersion.delete(ev.path);
          const entry: TailCacheEntry = last
            ? { ...last, at: isoFromMs(ev.atMs) }
            : { path: ev.path, dir: ev.dir, format: null, containerId: null, networkName: null, ifName: null, netns: null, pod: null, ips: [], result: null, writtenAt: null, at: isoFromMs(ev.atMs) };
          out.push({ type: 'cache.removed', entry });
        }
        // IP reservations, problems and reconciliation are not tail messages: /api/v1/ips and /api/v1/findings tell those.
      }
      return out;
    },
  };
}

/**
 * Whether a tail client wants a cache message. Namespace and pod filter
 * exactly as they filter calls (here and in /api/v1/calls): an entry
 * without that pod field (podman's never carry one) does not match a
 * filter on it. Command, plugin and failed are about calls, so a client
 * that sets any of them sees no cache messages. The rule is documented on
 * the tail route (TAIL_DESCRIPTION) and in the README.
 */
export function matchesCacheFilter(entry: TailCacheEntry, f: TailFilter): boolean {
  if (f.command !== undefined || f.plugin !== undefined || f.failed !== undefined) return false;
  if (f.namespace !== undefined && entry.pod?.namespace !== f.namespace) return false;
  if (f.pod !== undefined && entry.pod?.name !== f.pod) return false;
  return true;
}
