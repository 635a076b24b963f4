// Property tests: the byte scanner and the parsed-value walker agree on every JSON document, the
// scanner's output stays valid JSON with no secret left in it, and no input makes it throw or hang.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBytesRedactor } from '../../collector/redact/redact-json-bytes.js';
import { createValueRedactor } from '../../collector/redact/redact-value.js';
import { compilePointers, defaultRedactionRules } from '../../collector/redact/redaction-rules.js';

const rules = { ...defaultRedactionRules(), pointers: compilePointers(['/a/*/b', '/0']) };
const bytesRedactor = createBytesRedactor(rules);
const valueRedactor = createValueRedactor(rules);
const SECRET = 'SECRET-VALUE';

const key = fc.oneof(
  fc.constantFrom('password', 'apiKey', 'token', 'etcd_key_file', 'name', 'type', 'a', 'b', 'x/y', 'c~d', '__proto__', 'pass\u00e9word', 'ключ'),
  fc.string({ maxLength: 6 }),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(SECRET, null, true, false, 0, -1.5, 1e21, 'plain', 'é\u2028"\\'),
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
}));

describe('redaction properties', () => {
  it('gives the same JSON from bytes as from the parsed value, compact or indented', () => {
    fc.assert(
      fc.property(value, fc.boolean(), (v, indent) => {
        const doc = JSON.parse(JSON.stringify(v ?? null)) as unknown;
        const bytes = Buffer.from(JSON.stringify(doc, null, indent ? 2 : undefined));
        const fromBytes = bytesRedactor(bytes);
        const fromValue = valueRedactor(doc);
        const isContainer = typeof doc === 'object' && doc !== null;
        if (!isContainer) {
          // A scalar is text to the bytes redactor: only JSON-looking parts of it are scanned (see scanLines).
          if (!/[[{]/.test(bytes.toString('utf8'))) expect(fromBytes).toBeNull();
          return;
        }
        expect(fromBytes === null).toBe(fromValue === null);
        if (fromBytes === null || fromValue === null) return;
        expect(JSON.parse(fromBytes.bytes.toString('utf8'))).toEqual(fromValue.value);
        expect([...fromBytes.pointers].sort()).toEqual([...fromValue.pointers].sort());
      }),
      { numRuns: 2000 },
    );
  });

  it('never leaves a value under a secret key', () => {
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 6 }), fc.constantFrom('password', 'apiKey', 'k8s_auth_token', 'client-key-data'), (obj, secretKey) => {
        const doc = { ...obj, nested: [{ [secretKey]: SECRET }], [secretKey]: { deep: SECRET } };
        const out = bytesRedactor(Buffer.from(JSON.stringify(doc)))!;
        const parsed = JSON.parse(out.bytes.toString('utf8')) as Record<string, unknown>;
        expect(parsed[secretKey]).toBe('[redacted]');
        expect((parsed.nested as Array<Record<string, unknown>>)[0]![secretKey]).toBe('[redacted]');
        expect(out.pointers).toContain(`/${secretKey}`);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary or cut bytes, and names what it replaced', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), value.map((v) => Buffer.from(`{"password":${JSON.stringify(v ?? null)},"x":${JSON.stringify(v ?? null)}}`))), fc.nat(), (raw, cut) => {
        const bytes = Buffer.from(raw);
        const sliced = bytes.subarray(0, bytes.length === 0 ? 0 : cut % (bytes.length + 1));
        for (const b of [bytes, sliced, Buffer.concat([Buffer.from('['), bytes])]) {
          const out = bytesRedactor(b);
          if (out !== null) expect(out.pointers.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
