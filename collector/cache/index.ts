/**
 * The cache watcher's public surface: libcni's result cache and host-local's
 * reservations, watched, and what it reports (cache-types.ts); and the
 * bounded reads and directory watches the CNI conf dir watcher
 * (node-setup/conf-watcher.ts) shares with it.
 */

export { CACHE_PROBLEM_KINDS, type CacheEntry, type CacheEvent, type CacheListener, type IpAllocation } from './cache-types.js';
export { type CacheWatcher, type CacheWatcherStatus, createCacheWatcher } from './cache-watcher.js';
export { createDirWatches } from './dir-watches.js';
export { lstatOrNull, readBounded, statKey } from './read-bounded.js';
export { readCacheDirsOnce, type CacheDirsNow } from './read-once.js';
