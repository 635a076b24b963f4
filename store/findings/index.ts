/** The findings log (one open row per kind and subject) and the findings made from the calls alone. */

export { createFindingsLog, FILE_KINDS_SQL, type FindingFields } from './cache-findings.js';
export { createCallLoopDetector } from './call-loops.js';
export { CACHE_FINDING_KINDS, type CacheFindingKind, type FindingFilter, type StoredFinding } from './types.js';
