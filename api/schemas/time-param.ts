/**
 * `since` / `until` as clients write them: epoch milliseconds (digits only)
 * or an ISO 8601 date or date-time. Answers microseconds, the store's unit,
 * keeping an ISO fraction's sub-millisecond digits so a window can start
 * exactly at a call's recorded start.
 */

import { z } from 'zod';

const EPOCH_MS = /^\d{1,16}$/;
// Date, optional time (seconds and fraction optional), optional offset. Anything
// looser ("March 7", "1") is refused: Date.parse would guess.
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Microseconds since the epoch, or null when `text` is neither form (or not a real date). */
export function parseTimeParam(text: string): number | null {
  if (EPOCH_MS.test(text)) {
    const us = Number(text) * 1000;
    return Number.isSafeInteger(us) ? us : null;
  }
  const m = ISO.exec(text);
  if (!m) return null;
  const [, year, month, day, hour, minute, second, fraction, offset] = m;
  // Date.parse rolls 2025-02-30 over to March 2nd instead of refusing it.
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > DAYS_IN_MONTH[Number(month) - 1]!) return null;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return null;
  const time = hour === undefined ? '' : `T${hour}:${minute}:${second ?? '00'}`;
  const zone = offset === undefined ? '' : normalizeOffset(offset);
  const ms = Date.parse(`${year}-${month}-${day}${time}${zone}`);
  if (!Number.isFinite(ms)) return null;
  // Date.parse keeps milliseconds only; the fraction is added back to the microsecond.
  const fractionUs = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1e6 + 1e-6);
  return ms * 1000 + fractionUs;
}

/** `Z`, `+01`, `+0100` → forms Date.parse reads (`Z`, `+01:00`). */
function normalizeOffset(offset: string): string {
  if (offset.toUpperCase() === 'Z') return 'Z';
  const digits = offset.slice(1).replace(':', '');
  return `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
}

/** For a query's superRefine: a window given both ends must not be empty. */
export function refineTimeWindow(q: { readonly since?: number | undefined; readonly until?: number | undefined }, ctx: z.RefinementCtx): void {
  if (q.since !== undefined && q.until !== undefined && q.until <= q.since) {
    ctx.addIssue({ code: 'custom', path: ['until'], message: 'Must be later than since' });
  }
}

/** A query parameter holding a point in time; parses to microseconds since the epoch. */
export function timeParam(description: string) {
  return z
    .string()
    .transform((text, ctx) => {
      const us = parseTimeParam(text);
      if (us === null) {
        ctx.issues.push({
          code: 'custom',
          input: text,
          message: 'Expected an ISO 8601 date-time (e.g. 2025-11-21T18:30:00Z) or epoch milliseconds',
        });
        return z.NEVER;
      }
      return us;
    })
    .describe(`${description}: ISO 8601 (without an offset: the daemon's local time) or epoch milliseconds`);
}
