/** Store microseconds → the API's ISO strings and milliseconds, shared by every presenter. */

import { isoFromUs as iso } from '../schemas/iso-time.js';

export { iso };

export const isoOrNull = (us: number | null): string | null => (us === null ? null : iso(us));

/** Milliseconds with microsecond precision (3 decimals), the unit of every `durationMs`. */
export const msFromUs = (us: number): number => Math.round(us) / 1000;

export function durationMs(startedAtUs: number, endedAtUs: number | null): number | null {
  return endedAtUs === null ? null : msFromUs(endedAtUs - startedAtUs);
}
