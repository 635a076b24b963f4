/**
 * Durations (`7d`, `12h`, `1h30m`) and sizes (`1GiB`, `512MiB`) as people
 * write them in flags and environment variables. Pure parsers, so the config
 * schema can say precisely what is wrong with a value.
 */

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

// Binary units are what `ls -lh` and `du -h` print; decimal ones are accepted too.
const SIZE_UNITS_BYTES: Readonly<Record<string, number>> = {
  b: 1,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
  t: 1024 ** 4,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  tb: 1000 ** 4,
};

export type Parsed = { ok: true; value: number } | { ok: false; message: string };

/** `0` (off), or one or more `<number><unit>` parts with units ms, s, m, h, d, w: `7d`, `1h30m`. */
export function parseDuration(text: string): Parsed {
  const s = text.trim();
  if (s === '0') return { ok: true, value: 0 };
  const parts = [...s.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/gy)];
  const consumed = parts.reduce((n, p) => n + p[0].length, 0);
  if (parts.length === 0 || consumed !== s.length) {
    return { ok: false, message: `"${text}" is not a duration: use 0 (off) or a number with a unit (ms, s, m, h, d, w), e.g. 7d, 12h, 30m` };
  }
  const value = Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * (DURATION_UNITS_MS[p[2] as string] ?? 0), 0));
  return value > 0 ? { ok: true, value } : { ok: false, message: `"${text}" is zero: write 0 to turn it off` };
}

/** `0` (off), or `<number><unit>` with binary (KiB, MiB, GiB, TiB; K, M, G, T) or decimal (kB, MB, GB, TB) units, or B. */
export function parseSize(text: string): Parsed {
  const s = text.trim();
  if (s === '0') return { ok: true, value: 0 };
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(s);
  const unit = m ? SIZE_UNITS_BYTES[(m[2] as string).toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    return { ok: false, message: `"${text}" is not a size: use 0 (off) or a number with a unit (B, KiB, MiB, GiB, TiB, or kB, MB, GB, TB), e.g. 1GiB, 512MiB` };
  }
  return { ok: true, value: Math.floor(Number(m[1]) * unit) };
}
