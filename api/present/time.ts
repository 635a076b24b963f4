/** Store microseconds → the API's milliseconds, the unit of every `durationMs`; timestamps that may be absent as text (lib/iso-time.ts formats). */

import { isoFromMs } from '../../lib/index.js';

/** Milliseconds since the epoch → ISO 8601, null for null (a time that has not come: removed, superseded, resolved). */
export const isoFromMsOrNull = (ms: number | null): string | null => (ms === null ? null : isoFromMs(ms));

/** Milliseconds with microsecond precision (3 decimals). */
export const msFromUs = (us: number): number => Math.round(us) / 1000;

export function durationMs(startedAtUs: number, endedAtUs: number | null): number | null {
  return endedAtUs === null ? null : msFromUs(endedAtUs - startedAtUs);
}
