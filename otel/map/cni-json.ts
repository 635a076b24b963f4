/**
 * What the CNI spec puts in a call's JSON: the network config on stdin
 * (`name`, `cniVersion`) and, when a plugin fails, the error object on
 * stdout (`code`, `msg`, `details`). Best effort: a payload that is not
 * JSON, was cut, or is too large to be a config yields nothing.
 */

/** Larger is not a CNI config or error; parsing it would only cost time on the main thread. */
const MAX_JSON_BYTES = 1024 * 1024;

export interface NetworkConfigFacts {
  readonly name: string | null;
  readonly cniVersion: string | null;
}

export interface CniError {
  readonly code: number | null;
  readonly msg: string | null;
  readonly details: string | null;
}

/** The first byte that is not JSON whitespace is `{`: only then is a parse worth it (a failed one throws, which costs). */
function opensObject(bytes: Uint8Array): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue;
    return b === 0x7b;
  }
  return false;
}

function objectOf(bytes: Uint8Array): Record<string, unknown> | null {
  if (bytes.length === 0 || bytes.length > MAX_JSON_BYTES || !opensObject(bytes)) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export function networkConfigFacts(stdin: Uint8Array): NetworkConfigFacts {
  const o = objectOf(stdin);
  return { name: str(o?.name), cniVersion: str(o?.cniVersion) };
}

/** The CNI error a failed call printed (libcni reads stdout as the error when the exit code is not 0); null when none. */
export function cniErrorOf(stdout: Uint8Array): CniError | null {
  const o = objectOf(stdout);
  if (o === null || (o.code === undefined && o.msg === undefined)) return null;
  return { code: typeof o.code === 'number' && Number.isInteger(o.code) ? o.code : null, msg: str(o.msg), details: str(o.details) };
}
