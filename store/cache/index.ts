/** libcni's cached results and host-local's IP reservations as the store keeps them, linked to the calls. */

export { type CacheEntryFields, cacheEntryFields } from './cache-entry-fields.js';
export { createCacheStoreListener } from './cache-listener.js';
export { cacheFileWrittenAtMs } from './cache-link-rules.js';
export { type CacheReader, createCacheReader } from './cache-reader.js';
export { type CacheStore, createCacheStore } from './cache-store.js';
export { type StoredCacheEntry, type StoredIpHolding } from './cache-types.js';
export type { CacheStatus } from './cache-status.js';
