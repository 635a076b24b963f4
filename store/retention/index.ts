/** Keeps the database within its maximum age and size, in small steps beside ingest. */

export { type RetentionCounts, type RetentionOptions, type RetentionRun, type RetentionStatus, type RetentionWorker, createRetentionWorker } from './retention.js';
