/**
 * What every layer shares and that knows nothing of CNI: a topic (publish to
 * subscribers, each failure isolated) and timestamps as ISO 8601 text.
 */

export { type Topic, createTopic } from './topic.js';
export { isoFromMs, isoFromUs } from './iso-time.js';
