/** The HTTP API's public surface, for the daemon: the app builder and the types of what it is given. */

export { buildApp } from './app.js';
export type { ApiDeps, CacheDeps, NodeCniDeps, NodeCniStatus } from './deps.js';
export { presentReport, type ConfDiffBody, type ConfVersionBody, type DoctorReportBody, type RecordKnowledgeBody } from './schemas/node-cni.js';
