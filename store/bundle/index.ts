/** A bundle's record: the rows a selection keeps, as a database of the same schema, taken as one consistent snapshot. */

export { BUNDLE_TABLES, type PayloadColumns, type TableRule } from './bundle-tables.js';
export { type PodSelector, type RecordSelection } from './bundle-selection.js';
export { ALL_PAYLOADS, NO_PAYLOADS, type PayloadChoice, type SnapshotOptions, type SnapshotSummary, openRecordReadOnly, snapshotRecord } from './snapshot.js';
export { payloadCutFor, samplePayloads } from './payload-cut.js';
export { restoreIndexes } from './restore-indexes.js';
