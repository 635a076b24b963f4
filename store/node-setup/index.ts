/** The node's CNI setup in the store: conf file history, plugin binary provenance, what the record adds to the doctor, and the findings about the setup. */

export { createConfHistory, type ConfHistory } from './conf-history.js';
export { createPluginBinaries, type PluginBinaries } from './plugin-binaries.js';
export { createRecordKnowledge } from './record-knowledge.js';
export { createConfigFailureDetector } from './config-failures.js';
export { createGcChecks, parseGcStdin, type GcAnalysis, type GcChecks, type GcHolding, type Attachment } from './gc-check.js';
export type * from './types.js';
