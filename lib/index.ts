/**
 * What every layer shares and that knows nothing of CNI: a topic (publish to
 * subscribers, each failure isolated), a guard (a step's failure reported, a
 * fallback returned), steps run one at a time, and timestamps as ISO 8601 text.
 */

export { type BatchTopic, type Topic, createBatchTopic, createTopic } from './topic.js';
export { type Guard, createGuard } from './guarded.js';
export { type SerialSteps, createSerialSteps } from './serial-steps.js';
export { isoFromMs, isoFromUs } from './iso-time.js';
export { type TarEntry, type TarSource, TarFormatError, readTarGz, writeTarGz } from './tar-gz.js';
