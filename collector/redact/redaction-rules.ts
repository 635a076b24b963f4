/**
 * What counts as a secret inside a JSON payload: values under a key whose
 * name matches one of the key patterns (and none of the exceptions), values
 * at one of the JSON pointers, and any string holding a PEM private key.
 *
 * The defaults aim at credentials CNI configs and results really carry
 * (calico's `k8s_auth_token` and inline `etcd_key`, API keys and passwords of
 * vendor plugins, kubeconfig-style `client-key-data`) while leaving every
 * field of the reference plugins, multus, calico, flannel and cilium alone:
 * none of their ordinary keys (`mac`, `ipMasq`, `masqAll`, `markMasqBit`,
 * `hairpinMode`, `kubeconfig`, `sysctl`…) matches. Keys naming a file, path
 * or directory (`etcd_key_file`, `tokenPath`) are references, not material,
 * and are kept by the default exception.
 */

import { type PointerRule, parsePointer } from './json-pointer.js';

export const DEFAULT_REDACT_KEYS = [
  'passw(or)?d',
  'passphrase',
  'secret',
  'token',
  'credential',
  '(api|access|private|secret|ssh|tls|signing|encryption|shared|master|session|etcd)[-_.]?key',
  '^key$',
  'key[-_.]?data$',
  '^psk$',
  '^auth$',
  'authorization',
  'bearer',
  'cookie',
] as const;

export const DEFAULT_REDACT_KEYS_EXCEPT = ['(file|path|dir|directory)$'] as const;

/** Replaces a secret value (always a JSON string, whatever the value was). */
export const REDACTION_MARKER = '[redacted]';

/** At most this many pointers are reported per payload; every match is still redacted. */
export const MAX_REPORTED_POINTERS = 100;

export interface RedactionRules {
  readonly keys: readonly RegExp[];
  readonly keysExcept: readonly RegExp[];
  readonly pointers: readonly PointerRule[];
}

export class RedactionRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RedactionRuleError';
  }
}

/** Case-insensitive patterns from their text; throws RedactionRuleError naming the pattern that does not compile. */
export function compileKeyPatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => {
    try {
      return new RegExp(p, 'i');
    } catch (err) {
      throw new RedactionRuleError(`${JSON.stringify(p)} is not a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, '')})`);
    }
  });
}

export function compilePointers(pointers: readonly string[]): PointerRule[] {
  return pointers.map((p) => {
    const parsed = parsePointer(p);
    if (!parsed.ok) throw new RedactionRuleError(parsed.message);
    return parsed.rule;
  });
}

export function defaultRedactionRules(): RedactionRules {
  return { keys: compileKeyPatterns(DEFAULT_REDACT_KEYS), keysExcept: compileKeyPatterns(DEFAULT_REDACT_KEYS_EXCEPT), pointers: [] };
}

/**
 * Splits a comma-separated list of regular expressions, leaving commas
 * inside `{m,n}`, `[…]`, `(…)` or after a backslash alone, so `a{1,3}`
 * stays one pattern. Empty items are dropped: an empty list turns the rule off.
 */
export function splitPatternList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inClass = false;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i]!;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') inClass = true;
    else if (c === '(' || c === '{') depth++;
    else if ((c === ')' || c === '}') && depth > 0) depth--;
    else if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
      continue;
    }
    current += c;
  }
  out.push(current);
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

/**
 * Decides key names with a small memo: the same few dozen keys (`cniVersion`,
 * `name`, `type`, `ipam`…) come back in every payload, so most decisions
 * cost a map lookup instead of a dozen regex tests.
 */
export function keyClassifier(rules: Pick<RedactionRules, 'keys' | 'keysExcept'>): (key: string) => boolean {
  const memo = new Map<string, boolean>();
  if (rules.keys.length === 0) return () => false;
  return (key) => {
    let secret = memo.get(key);
    if (secret !== undefined) return secret;
    secret = rules.keys.some((r) => r.test(key)) && !rules.keysExcept.some((r) => r.test(key));
    // Keys are bounded by what plugins print, but a hostile payload could bring millions: start over.
    if (memo.size >= 4096) memo.clear();
    memo.set(key, secret);
    return secret;
  };
}
