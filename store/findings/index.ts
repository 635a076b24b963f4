/** The findings log (one open row per kind and subject), its read side and the findings made from the calls alone. */

export { createFindingsLog, FILE_KINDS_SQL, type FindingFields } from './cache-findings.js';
export { createCallLoopDetector } from './call-loops.js';
export { createLeftBehindCheck, type KernelObjectProbe, type LeftBehindCheck } from './left-behind.js';
export { leftBehindObjects, type KernelObjectRef } from './left-behind-rules.js';
export { createFindingsReader, type FindingsReader, MAX_FINDINGS_PAGE } from './findings-reader.js';
export {
  CACHE_FINDING_KINDS,
  type CacheFindingKind,
  FINDING_SEVERITIES,
  FINDING_SEVERITY,
  type FindingSeverity,
  type FindingFilter,
  type FindingGroupPage,
  type FindingGroupQuery,
  kindsOfSeverity,
  severityRankOf,
  type StoredFinding,
  type StoredFindingGroup,
} from './types.js';
