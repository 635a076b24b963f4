/**
 * `since` / `until` as clients write them, one rule for the REST routes,
 * the tail and the CLI (which passes its flags through unchanged):
 *
 * - an ISO 8601 date-time with an offset (`2025-11-21T18:30:00Z`,
 *   `…+01:00`) is that instant;
 * - **without an offset it is UTC**, never the daemon's (or the client's)
 *   zone: every time cnirec prints is UTC and ends in `Z`, and a time copied
 *   from one node must mean the same on any other; a bare date is midnight UTC;
 * - a duration (`90s`, `10m`, `1h30m`, `2d`, `1w`) is that long before now,
 *   on the daemon's clock;
 * - digits are epoch milliseconds, 13 of them (2001 to 2286). Fewer or more
 *   digits are refused with what they look like: `1795616000` is epoch
 *   *seconds* (as milliseconds it would be January 1970 and match
 *   everything), 16 digits are microseconds, 19 nanoseconds.
 *
 * Answers microseconds, the store's unit, keeping an ISO fraction's
 * sub-millisecond digits so a window can start exactly at a call's start.
 */

import { z } from 'zod';
import { isoFromMs } from '../../lib/index.js';

const DIGITS = /^\d+$/;
// Date, optional time (seconds and fraction optional), optional offset. Anything
// looser ("March 7", "1") is refused: Date.parse would guess.
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
const DURATION_PART = /(\d+)(ms|s|m|h|d|w)/g;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Epoch milliseconds have 13 digits from 2001-09-09 until 2286. */
const MIN_EPOCH_MS = 1e12;
const MAX_EPOCH_MS = 1e13 - 1;

export const TIME_PARAM_HELP =
  'an ISO 8601 date-time (2025-11-21T18:30:00Z; without an offset it is UTC), a duration before now (90s, 10m, 1h30m, 2d) or epoch milliseconds (13 digits)';

export type TimeParamResult = { readonly ok: true; readonly us: number } | { readonly ok: false; readonly message: string };

/** `text` as microseconds since the epoch, or why it is refused. `nowMs` anchors durations. */
export function readTimeParam(text: string, nowMs: number): TimeParamResult {
  if (DIGITS.test(text)) return readEpoch(text);
  if (DURATION.test(text)) {
    let ms = 0;
    for (const [, n, unit] of text.matchAll(DURATION_PART)) ms += Number(n) * UNIT_MS[unit!]!;
    const us = Math.round((nowMs - ms) * 1000);
    return Number.isSafeInteger(us) ? { ok: true, us } : refuse(`"${text}" reaches too far back`);
  }
  const us = readIso(text);
  return us === null ? refuse(`Expected ${TIME_PARAM_HELP}`) : { ok: true, us };
}

/** Microseconds since the epoch, or null when `text` is none of the forms (or a mistake). */
export function parseTimeParam(text: string, nowMs: number = Date.now()): number | null {
  const r = readTimeParam(text, nowMs);
  return r.ok ? r.us : null;
}

function readEpoch(text: string): TimeParamResult {
  const n = Number(text);
  if (n >= MIN_EPOCH_MS && n <= MAX_EPOCH_MS) return { ok: true, us: n * 1000 };
  const digits = text.replace(/^0+(?=\d)/, '').length;
  // Date's range: a guess past it names no time at all.
  const iso = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? isoFromMs(ms) : null);
  const guess =
    digits >= 9 && digits <= 10 ? ['epoch seconds', n * 1000] : digits >= 15 && digits <= 16 ? ['epoch microseconds', n / 1000] : digits >= 18 && digits <= 19 ? ['epoch nanoseconds', n / 1e6] : null;
  if (guess !== null && iso(guess[1] as number) !== null) {
    const ms = Math.floor(guess[1] as number);
    return refuse(`${text} looks like ${guess[0]} (${iso(ms)}); epoch values are milliseconds: ${ms}`);
  }
  return refuse(`${text} is not a plausible time in epoch milliseconds (13 digits); give ${TIME_PARAM_HELP}`);
}

function readIso(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, year, month, day, hour, minute, second, fraction, offset] = m;
  // Date.parse rolls 2025-02-30 over to March 2nd instead of refusing it.
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > DAYS_IN_MONTH[Number(month) - 1]!) return null;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return null;
  const time = hour === undefined ? 'T00:00:00' : `T${hour}:${minute}:${second ?? '00'}`;
  // No offset: UTC (see the rule above), never the process's zone.
  const zone = offset === undefined ? 'Z' : normalizeOffset(offset);
  const ms = Date.parse(`${year}-${month}-${day}${time}${zone}`);
  if (!Number.isFinite(ms)) return null;
  // Date.parse keeps milliseconds only; the fraction is added back to the microsecond.
  const fractionUs = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1e6 + 1e-6);
  return ms * 1000 + fractionUs;
}

const refuse = (message: string): TimeParamResult => ({ ok: false, message });

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
      const r = readTimeParam(text, Date.now());
      if (!r.ok) {
        ctx.issues.push({ code: 'custom', input: text, message: r.message });
        return z.NEVER;
      }
      return r.us;
    })
    .describe(`${description}: ${TIME_PARAM_HELP}`);
}
