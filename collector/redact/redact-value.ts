/**
 * The same rules as redact-json-bytes.ts, for JSON that is already parsed
 * (libcni's cache entries: the decoded `config`, the cached `result`).
 * Copies only the objects and arrays on the way to a secret; a value with
 * nothing secret comes back as the same object.
 */

import { escapeSegment, pointerMatches } from './json-pointer.js';
import { MAX_TRACKED_DEPTH } from './redact-json-bytes.js';
import { MAX_REPORTED_POINTERS, REDACTION_MARKER, keyClassifier, type RedactionRules } from './redaction-rules.js';

export interface RedactedValue {
  readonly value: unknown;
  readonly pointers: readonly string[];
}

/** `prefix` is put before each reported pointer (e.g. `/config`); rules match paths inside the value. */
export type ValueRedactor = (value: unknown, prefix?: string) => RedactedValue | null;

const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

export function createValueRedactor(rules: RedactionRules): ValueRedactor {
  const isSecretKey = keyClassifier(rules);
  return (value, prefix = '') => {
    const pointers: string[] = [];
    const path: string[] = [];
    const report = () => {
      if (pointers.length < MAX_REPORTED_POINTERS) pointers.push(prefix + path.map((s) => `/${escapeSegment(s)}`).join(''));
    };
    const isSecretAt = (key: string | null) => (key !== null && isSecretKey(key)) || (rules.pointers.length > 0 && pointerMatches(rules.pointers, path));

    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') {
        if (v.includes('PRIVATE KEY-----') && PEM_PRIVATE_KEY.test(v)) {
          report();
          return REDACTION_MARKER;
        }
        return v;
      }
      if (typeof v !== 'object' || v === null) return v;
      if (path.length >= MAX_TRACKED_DEPTH) {
        report();
        return REDACTION_MARKER;
      }
      let copy: Record<string, unknown> | unknown[] | null = null;
      const entries: [string, unknown][] = Array.isArray(v) ? v.map((item, i) => [String(i), item]) : Object.entries(v);
      for (const [k, child] of entries) {
        path.push(k);
        const out = isSecretAt(Array.isArray(v) ? null : k) ? (report(), REDACTION_MARKER) : walk(child);
        path.pop();
        if (out !== child) {
          copy ??= Array.isArray(v) ? [...(v as unknown[])] : { ...(v as Record<string, unknown>) };
          // defineProperty, not assignment: a JSON key "__proto__" must stay a key, not become the prototype.
          Object.defineProperty(copy, k, { value: out, enumerable: true, writable: true, configurable: true });
        }
      }
      return copy ?? v;
    };

    const out = walk(value);
    return pointers.length === 0 && out === value ? null : { value: out, pointers };
  };
}
