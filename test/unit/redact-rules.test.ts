// The redaction settings: pattern lists, JSON pointers and what a bad one tells the operator.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../daemon/config.js';
import { formatPointer, parsePointer, pointerMatches } from '../../collector/redact/json-pointer.js';
import { compileKeyPatterns, compilePointers, DEFAULT_REDACT_KEYS, DEFAULT_REDACT_KEYS_EXCEPT, keyClassifier, RedactionRuleError, splitPatternList } from '../../collector/redact/redaction-rules.js';

describe('redaction rules', () => {
  it('splits a pattern list on commas outside {m,n}, [...], (...) and escapes', () => {
    expect(splitPatternList('password, token,^a{1,3}$,[,x],(p|q,r)?,a\\,b,,')).toEqual(['password', 'token', '^a{1,3}$', '[,x]', '(p|q,r)?', 'a\\,b']);
    expect(splitPatternList('')).toEqual([]);
  });

  it('compiles patterns case-insensitively and names a pattern that does not compile', () => {
    expect(compileKeyPatterns(['^Token$'])[0]!.test('TOKEN')).toBe(true);
    expect(() => compileKeyPatterns(['ok', '(unclosed'])).toThrow(RedactionRuleError);
    expect(() => compileKeyPatterns(['ok', '(unclosed'])).toThrow(/"\(unclosed" is not a valid regular expression \(.*Unterminated group/);
  });

  it('parses JSON pointers with ~0 and ~1, and refuses malformed ones', () => {
    expect(parsePointer('/a~1b/c~0d/~01')).toEqual({ ok: true, rule: ['a/b', 'c~d', '~1'] });
    expect(parsePointer('/')).toEqual({ ok: true, rule: [''] });
    expect(formatPointer(['a/b', 'c~d', '~1'])).toBe('/a~1b/c~0d/~01');
    expect(parsePointer('ipam/token')).toMatchObject({ ok: false, message: expect.stringMatching(/must start with "\/"/) });
    expect(parsePointer('/a~2')).toMatchObject({ ok: false, message: expect.stringMatching(/"~" not followed by 0 or 1/) });
    expect(() => compilePointers(['/ok', 'bad'])).toThrow(RedactionRuleError);
  });

  it('matches pointers segment by segment, * standing for any one key or index', () => {
    const rules = compilePointers(['/plugins/*/auth', '/top']);
    expect(pointerMatches(rules, ['plugins', '3', 'auth'])).toBe(true);
    expect(pointerMatches(rules, ['plugins', '3', 'auth', 'user'])).toBe(false);
    expect(pointerMatches(rules, ['top'])).toBe(true);
    expect(pointerMatches(rules, ['plugins', 'auth'])).toBe(false);
  });

  it('by default leaves every ordinary field of the reference plugins, multus, calico, flannel and cilium alone', () => {
    const isSecret = keyClassifier({ keys: compileKeyPatterns(DEFAULT_REDACT_KEYS), keysExcept: compileKeyPatterns(DEFAULT_REDACT_KEYS_EXCEPT) });
    const fields = readFileSync(path.join(import.meta.dirname, '../fixtures/redact/ordinary-cni-fields.txt'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(fields.length).toBeGreaterThan(150);
    expect(fields.filter(isSecret)).toEqual([]);
  });

  it('by default hides credential-like keys and keeps references to files', () => {
    const isSecret = keyClassifier({ keys: compileKeyPatterns(DEFAULT_REDACT_KEYS), keysExcept: compileKeyPatterns(DEFAULT_REDACT_KEYS_EXCEPT) });
    for (const k of ['password', 'passwd', 'dbPassword', 'token', 'k8s_auth_token', 'clientSecret', 'apiKey', 'api_key', 'privateKey', 'etcd_key', 'client-key-data', 'credentials', 'Authorization', 'key', 'psk']) {
      expect(isSecret(k), k).toBe(true);
    }
    for (const k of ['etcd_key_file', 'tokenFile', 'token_path', 'secretDir', 'publicKey', 'keys', 'mac', 'ipMasq', 'masqAll', 'kubeconfig', 'monkey', 'hairpinMode', 'k8s_client_key', 'name', 'type']) {
      expect(isSecret(k), k).toBe(false);
    }
  });
});

describe('redaction settings', () => {
  it('have defaults: the key list, the file/path exception, no pointers', () => {
    const cfg = loadConfig({}, {});
    expect(cfg.redactKeys.map((r) => r.source)).toEqual([...DEFAULT_REDACT_KEYS]);
    expect(cfg.redactKeysExcept).toHaveLength(1);
    expect(cfg.redactPointers).toEqual([]);
  });

  it('take lists from flags and CNIREC_* variables; empty turns a rule off', () => {
    const cfg = loadConfig({ redactKeys: '^vendor_opaque$,x{1,2}' }, { CNIREC_REDACT_POINTERS: '/plugins/*/auth, /ipam/x~1y' });
    expect(cfg.redactKeys.map((r) => r.source)).toEqual(['^vendor_opaque$', 'x{1,2}']);
    expect(cfg.redactPointers).toEqual([['plugins', '*', 'auth'], ['ipam', 'x/y']]);
    expect(loadConfig({ redactKeys: '' }, {}).redactKeys).toEqual([]);
  });

  it.each([
    ['redactKeys', 'ok,(bad', /--redact-keys \(CNIREC_REDACT_KEYS\): "\(bad" is not a valid regular expression/],
    ['redactKeysExcept', '[z-a]', /--redact-keys-except \(CNIREC_REDACT_KEYS_EXCEPT\): "\[z-a\]" is not a valid regular expression/],
    ['redactPointers', 'ipam/token', /--redact-pointers \(CNIREC_REDACT_POINTERS\): JSON pointer "ipam\/token" must start with "\/"/],
  ] as const)('refuses %s=%s with a ConfigError naming the flag and the bad item', (name, value, message) => {
    expect(() => loadConfig({ [name]: value }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, {})).toThrow(message);
  });
});
