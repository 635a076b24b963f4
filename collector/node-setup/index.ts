/** The node's CNI setup: runtime configs, conf dirs, bin dirs, the doctor's checks, conf history and binary provenance. */

export type * from './types.js';
export type * from './report.js';
export { diagnose, type NodeSnapshot, type RecordKnowledge } from './doctor.js';
export { parseConf, confKindOf, type ParsedConf, type PluginRef } from './conf-file.js';
export { compareVersions, isVersion } from './cni-version.js';
export { readNode, confDirsToWatch, type ReadNodeOptions } from './read-node.js';
export { createConfWatcher, type ConfEvent, type ConfListener, type ConfWatcher, type ConfWatcherOptions } from './conf-watcher.js';
export type { ConfFileVersion, ConfRedact } from './conf-version.js';
export { createBinaryHasher, type BinaryHasher, type BinaryVersion } from './binary-identity.js';
export { DEFAULT_BIN_DIR, DEFAULT_CONF_DIR, type Requested } from './views.js';
export { PROBLEM_CODES } from './types.js';
