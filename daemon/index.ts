/**
 * The daemon's assembly, for the command line: its configuration (one zod table) and `run`, which
 * wires collector, store, API and the background workers together.
 */

export { ConfigError, type SettingName, configReference, flagName, isRepeatable, loadConfig, settings } from './config.js';
export { runDaemon } from './run.js';
export { buildInfo, type BuildInfo } from './build-info.js';
export { parseDuration } from './config-units.js';
export { createDaemonLogger } from './log-ring.js';
export { BundleError, makeBundle, type BundleRequest, type DaemonState, type MadeBundle } from './make-bundle.js';
export { bundleFileName, bundleRequest, type BundleAsk } from './bundle-request.js';
export { bundleSetup, nodeName } from './bundle-wiring.js';
export { readBundle, readBundleManifest, type OpenedBundle } from './read-bundle.js';
export { recentDaemonLog } from './bundle-log.js';
export { serveBundle, type ServedBundle } from './open-bundle.js';
export { parseListen } from './config.js';
export { BUNDLE_FORMAT_VERSION, type BundleManifest } from './bundle-manifest.js';
export { parseSize } from './config-units.js';
