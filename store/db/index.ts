/** The database itself: opening it, its schema and migrations, its size, the store's one error type and write timing. */

export { type DatabaseSize, createSizeMeter } from './db-size.js';
export { StoreError, type StoreErrorCode, isTransientStoreError, toStoreError } from './errors.js';
export { APPLICATION_ID, MIGRATIONS, type Migration, latestVersion, migrate } from './migrations.js';
export { type Database, openDatabase, openReadConnection } from './open-database.js';
export { EXPORT_TRIGGERS } from './export-schema.js';
export { type WriteKind, type WriteTiming, type WriteTimingStats, writeTimingFor } from './write-timing.js';
export { type WriteBehindOptions, type WriteBehindQueue, createWriteBehindQueue } from './write-behind-queue.js';
