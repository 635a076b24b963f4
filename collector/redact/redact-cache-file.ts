/**
 * A libcni cache file as it is on disk, with its secrets replaced, for what
 * leaves the node as a file (a bundle): the same rules as the cache entries
 * the record keeps — values under secret keys anywhere in it, the conf inside
 * its base64 `config`, and `cniArgs` pairs whose name is a secret key
 * (`["VENDOR_API_KEY", "…"]`). A file that is not JSON (empty, cut short: the
 * broken ones worth looking at) goes through the byte scanner, which
 * redacts as far as the JSON goes, and its pairs through a pattern.
 */

import { createBytesRedactor } from './redact-json-bytes.js';
import { createValueRedactor } from './redact-value.js';
import { keyClassifier, REDACTION_MARKER, type RedactionRules } from './redaction-rules.js';

/** Returns the bytes to keep: the same Buffer when nothing was secret. */
export type CacheFileRedactor = (bytes: Buffer) => Buffer;

const PAIR = /\[\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"/g;

export function createCacheFileRedactor(rules: RedactionRules): CacheFileRedactor {
  const bytes = createBytesRedactor(rules);
  const value = createValueRedactor(rules);
  const isSecretKey = keyClassifier(rules);

  const redactPairs = (pairs: unknown): unknown =>
    Array.isArray(pairs) ? pairs.map((p) => (Array.isArray(p) && typeof p[0] === 'string' && isSecretKey(p[0]) ? [p[0], REDACTION_MARKER, ...p.slice(2)] : p)) : pairs;

  const redactConfig = (b64: unknown): unknown => {
    if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return b64;
    const conf = Buffer.from(b64, 'base64');
    const out = bytes(conf);
    return out === null ? b64 : out.bytes.toString('base64');
  };

  return (raw) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      const scanned = bytes(raw)?.bytes ?? raw;
      const text = scanned.toString('utf8');
      const paired = text.replace(PAIR, (whole, key: string) => (isSecretKey(key) ? `["${key}","${REDACTION_MARKER}"` : whole));
      return paired === text ? scanned : Buffer.from(paired, 'utf8');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return bytes(raw)?.bytes ?? raw;
    const file = parsed as Record<string, unknown>;
    const pairs = redactPairs(file.cniArgs);
    const config = redactConfig(file.config);
    const rest = value(file);
    const changed = pairs !== file.cniArgs && JSON.stringify(pairs) !== JSON.stringify(file.cniArgs);
    if (!changed && config === file.config && rest === null) return raw;
    const out = { ...((rest?.value as Record<string, unknown> | undefined) ?? file) };
    if ('cniArgs' in file) out.cniArgs = pairs;
    if ('config' in file) out.config = config;
    return Buffer.from(JSON.stringify(out), 'utf8');
  };
}
