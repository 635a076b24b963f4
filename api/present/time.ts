/** Store microseconds → the API's milliseconds, the unit of every `durationMs` (timestamps as text: lib/iso-time.ts). */

/** Milliseconds with microsecond precision (3 decimals). */
export const msFromUs = (us: number): number => Math.round(us) / 1000;

export function durationMs(startedAtUs: number, endedAtUs: number | null): number | null {
  return endedAtUs === null ? null : msFromUs(endedAtUs - startedAtUs);
}
