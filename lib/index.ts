/** What every layer shares and that knows nothing of CNI: timestamps as ISO 8601 text. */

export { isoFromMs, isoFromUs } from './iso-time.js';
