/** Recorded calls: written from the collector's events, read as pages, single calls and pod graphs. */

export { byStartThenId, summaryOfCall } from './call-decode.js';
export { type CallReader, MAX_PAGE_SIZE, createCallReader } from './call-reader.js';
export { createCallStore } from './call-store.js';
export { networkOfStdin } from './network-name.js';
export { type StoreListener, type StoreListenerOptions, createStoreListener } from './store-listener.js';
export type * from './types.js';
export type { StoreStatus } from './store-status.js';
