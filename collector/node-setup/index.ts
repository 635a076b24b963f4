/** The node's CNI setup: runtime configs, conf dirs, bin dirs, the doctor's checks, conf history and binary provenance. */

export type * from './types.js';
export type * from './report.js';
export { diagnose, type NodeSnapshot, type RecordKnowledge } from './doctor.js';
export { parseConf, confKindOf, type ParsedConf, type PluginRef } from './conf-file.js';
export { compareVersions, isVersion } from './cni-version.js';
