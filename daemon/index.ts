/**
 * The daemon's assembly, for the command line: its configuration (one zod table) and `run`, which
 * wires collector, store, API and the background workers together.
 */

export { ConfigError, type SettingName, configReference, flagName, isRepeatable, loadConfig, settings } from './config.js';
export { runDaemon } from './run.js';
export { buildInfo, type BuildInfo } from './build-info.js';
export { parseDuration } from './config-units.js';
