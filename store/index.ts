/** The store's public surface, for api/, cli/ and the daemon. */

export { openDatabase, openReadConnection, type Database } from './db/open-database.js';
export { createCallStore } from './calls/call-store.js';
export { byStartThenId } from './calls/call-decode.js';
export { createCallReader, type CallReader } from './calls/call-reader.js';
export { createStoreListener, type StoreListener, type StoreListenerOptions } from './calls/store-listener.js';
export { StoreError, isTransientStoreError, type StoreErrorCode } from './db/errors.js';
export { MIGRATIONS, migrate, type Migration } from './db/migrations.js';
export { MAX_PAGE_SIZE } from './calls/call-reader.js';
export type * from './calls/types.js';
export { createRetentionWorker, type RetentionOptions, type RetentionRun, type RetentionStatus, type RetentionWorker, type RetentionCounts } from './retention/retention.js';
export { writeTimingFor, type WriteTiming, type WriteTimingStats, type WriteKind } from './db/write-timing.js';
export type { DatabaseSize } from './db/db-size.js';
