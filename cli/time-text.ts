/**
 * Times as the CLI prints them. Absolute times are the API's own ISO 8601
 * strings, always UTC and ending in `Z`: what is printed can be pasted into
 * `--since`, on any node, whatever its zone (a time without an offset is
 * read as UTC there too). Lists show kubectl-style ages (`45s`, `7m`,
 * `3h12m`, `2d`) by default and absolute times with `-o wide`.
 */

/** kubectl's HumanDuration: precise while small, coarser as it grows. */
export function ageText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0s';
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 192) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

/** Age of an ISO time at `nowMs`. */
export const ageOf = (iso: string, nowMs: number): string => ageText(nowMs - Date.parse(iso));

export function durationText(ms: number | null): string {
  if (ms === null) return '-';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${ms.toFixed(1)}ms`;
}
