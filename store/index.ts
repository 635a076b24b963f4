/** The store's public surface, for api/, cli/ and the daemon. */

export { openDatabase, openReadConnection, type Database } from './open-database.js';
export { createCallStore } from './call-store.js';
export { byStartThenId } from './call-decode.js';
export { createCallReader, type CallReader } from './call-reader.js';
export { createStoreListener, type StoreListener, type StoreListenerOptions } from './store-listener.js';
export { StoreError, isTransientStoreError, type StoreErrorCode } from './errors.js';
export { MIGRATIONS, migrate, type Migration } from './migrations.js';
export { MAX_PAGE_SIZE } from './call-reader.js';
export type * from './types.js';
export { createRetentionWorker, type RetentionOptions, type RetentionRun, type RetentionStatus, type RetentionWorker, type RetentionCounts } from './retention.js';
export { writeTimingFor, type WriteTiming, type WriteTimingStats, type WriteKind } from './write-timing.js';
export type { DatabaseSize } from './db-size.js';
