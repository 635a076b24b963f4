/** A STATUS call's stdout as libcni reads it: empty when ready, a CNI error (`code`, `msg`, `details`) when not. Pure. */

import type { CniErrorAnswer } from './types.js';

/** The error a plugin printed; null when nothing was captured or it is no JSON object with a code or msg. */
export function cniErrorOf(stdout: Buffer): CniErrorAnswer | null {
  if (stdout.length === 0 || stdout.length > 64 * 1024) return null;
  let json: unknown;
  try {
    json = JSON.parse(stdout.toString('utf8'));
  } catch {
    return null;
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  const o = json as Record<string, unknown>;
  const code = typeof o.code === 'number' && Number.isInteger(o.code) ? o.code : null;
  const msg = typeof o.msg === 'string' ? o.msg : null;
  if (code === null && msg === null) return null;
  return { code, msg, details: typeof o.details === 'string' && o.details !== '' ? o.details : null };
}

/** The CNI spec's codes a STATUS answers with, in words. */
export function cniErrorCodeText(code: number | null): string | null {
  if (code === 50) return 'plugin not available';
  if (code === 51) return 'plugin not available; existing containers may be damaged';
  return null;
}
