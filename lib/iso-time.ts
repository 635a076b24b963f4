/**
 * The one time formatter of the tree: every timestamp cnirec writes as text
 * (API, tail, status, logs, findings) goes through it, in milliseconds or
 * the store's microseconds.
 *
 * Timestamps → ISO 8601 strings, exactly as Date#toISOString writes them,
 * without a Date per timestamp. A pod's story or a page of calls formats two
 * timestamps per call and helper; toISOString costs ~1.5 µs each, which was
 * a third of building a summary. Calls cluster in time, so the date part is
 * kept from the last call (one Date per day seen) and the time of day is
 * plain arithmetic.
 */

const DAY_MS = 86_400_000;
/** Date's own range (±8.64e15 ms); beyond it toISOString throws, and so do we. */
const MAX_MS = 8.64e15;

let cachedDay = Number.NaN;
/** "YYYY-MM-DDT" (or "±YYYYYY-MM-DDT") of `cachedDay`. */
let cachedPrefix = '';

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number): string => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** Milliseconds since the epoch → ISO 8601, the same string as `new Date(ms).toISOString()`. */
export function isoFromMs(ms: number): string {
  // Fractions and out-of-range values: Date's own rules (truncation, RangeError).
  if (!Number.isInteger(ms) || ms > MAX_MS || ms < -MAX_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    // Midnight's string ends in "00:00:00.000Z", 13 characters.
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, -13);
    cachedDay = day;
  }
  const inDay = ms - day * DAY_MS;
  const seconds = Math.floor(inDay / 1000);
  return `${cachedPrefix}${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}.${pad3(inDay % 1000)}Z`;
}

/** Microseconds since the epoch (the store's unit) → ISO 8601 at millisecond precision, rounded down. */
export const isoFromUs = (us: number): string => isoFromMs(Math.floor(us / 1000));
