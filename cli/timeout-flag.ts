/** `--timeout` / CNIREC_TIMEOUT: how long one request to the daemon may take (`30s`, `2m`, `500ms`; a bare number is seconds). */

import { UsageError } from './errors.js';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 };

export function readTimeout(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2] ?? 's']! : Number.NaN;
  if (!Number.isFinite(ms) || ms <= 0 || ms > 3_600_000) throw new UsageError(`${flag} takes a duration such as 30s, 2m or 500ms (at most 1h), not "${value}"`);
  return ms;
}
