// Redaction applied to what the collector publishes: calls with their helpers, and libcni cache entries.
import { describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../collector/cache/cache-types.js';
import { parseCacheFile } from '../../collector/cache/parse-cache-file.js';
import { createRedactor } from '../../collector/redact/redact-events.js';
import { createValueRedactor } from '../../collector/redact/redact-value.js';
import { compilePointers, defaultRedactionRules } from '../../collector/redact/redaction-rules.js';
import type { CapturedStream, CniCall, HelperProcess } from '../../collector/types.js';

const redactor = createRedactor(defaultRedactionRules());
const stream = (content: string | object): CapturedStream => {
  const bytes = Buffer.from(typeof content === 'string' ? content : JSON.stringify(content));
  return { bytes, totalBytes: bytes.length, truncated: false };
};
const helper = (stdout: CapturedStream): HelperProcess => ({
  pid: 2,
  ppid: 1,
  path: '/usr/bin/jq',
  argv: ['jq', '.'],
  startedAtUs: 1,
  endedAtUs: 2,
  outcome: { exitCode: 0, signal: null, coreDumped: false },
  stdout,
  stderr: stream(''),
});
const call = (over: Partial<CniCall>): CniCall =>
  ({ id: 'c1', argv: ['/opt/cni/bin/vendor'], cniArgs: null, env: { CNI_COMMAND: 'ADD' }, stdin: stream(''), stdout: stream(''), stderr: stream(''), helpers: [], ...over }) as unknown as CniCall;

describe('redacting collector events', () => {
  it('redacts stdin, stdout and helper output, keeps totalBytes, and marks each stream with its pointers', () => {
    const stdin = stream({ cniVersion: '1.0.0', type: 'vendor', password: 'hunter2' });
    const c = redactor.call(call({ stdin, stdout: stream({ ips: [], token: 't0k' }), stderr: stream('log: password=hunter2\n'), helpers: [helper(stream({ secret: 's' })), helper(stream('plain'))] }));
    expect(c.stdin.bytes.toString()).toBe('{"cniVersion":"1.0.0","type":"vendor","password":"[redacted]"}');
    expect(c.stdin.totalBytes).toBe(stdin.totalBytes);
    expect(c.stdin.redactions).toEqual(['/password']);
    expect(c.stdout.redactions).toEqual(['/token']);
    // Not JSON: passes unchanged, as documented.
    expect(c.stderr.redactions).toBeUndefined();
    expect(c.helpers[0]!.stdout.redactions).toEqual(['/secret']);
    expect(c.helpers[1]!.stdout.redactions).toBeUndefined();
  });

  it('hands back the very same objects when nothing is secret', () => {
    const plain = call({ stdin: stream({ cniVersion: '1.0.0', type: 'bridge' }), helpers: [helper(stream('x'))] });
    expect(redactor.call(plain)).toBe(plain);
    const events = [{ type: 'call.finished' as const, call: plain }];
    expect(redactor.callEvents(events)[0]).toBe(events[0]);
  });
});

describe('redacting parsed JSON (cache entries)', () => {
  it('copies only the containers on the way to a secret and reports pointers under a prefix', () => {
    const value = { a: { b: 1 }, plugins: [{ type: 'x', auth: { u: 1 } }, { type: 'y' }] };
    const r = createValueRedactor(defaultRedactionRules())(value, '/config');
    expect(r!.value).toEqual({ a: { b: 1 }, plugins: [{ type: 'x', auth: '[redacted]' }, { type: 'y' }] });
    expect(r!.pointers).toEqual(['/config/plugins/0/auth']);
    expect((r!.value as typeof value).a).toBe(value.a);
    expect(value.plugins[0]!.auth).toEqual({ u: 1 });
  });

  it('applies pointers and PEM detection, and keeps a "__proto__" key a key', () => {
    const value = JSON.parse('{"__proto__":{"token":"x"},"opaque":[1,"-----BEGIN EC PRIVATE KEY-----\\nAA\\n-----END EC PRIVATE KEY-----"]}') as unknown;
    const r = createValueRedactor({ ...defaultRedactionRules(), pointers: compilePointers(['/opaque/0']) })(value);
    expect(JSON.stringify(r!.value)).toBe('{"__proto__":{"token":"[redacted]"},"opaque":["[redacted]","[redacted]"]}');
    expect(r!.pointers).toEqual(['/__proto__/token', '/opaque/0', '/opaque/1']);
    expect(createValueRedactor(defaultRedactionRules())({ cniVersion: '1.0.0' })).toBeNull();
  });

  it('redacts the config, result and capability args of a libcni cache entry', () => {
    const conf = { cniVersion: '1.0.0', name: 'vnet', plugins: [{ type: 'vendor', apiKey: 'conf-secret' }] };
    const file = Buffer.from(
      JSON.stringify({
        kind: 'cniCacheV1',
        containerId: 'c1',
        config: Buffer.from(JSON.stringify(conf)).toString('base64'),
        ifName: 'eth0',
        networkName: 'vnet',
        cniArgs: [['K8S_POD_NAME', 'p']],
        capabilityArgs: { token: 'cap-secret' },
        result: { cniVersion: '1.0.0', ips: [{ address: '10.1.0.2/24' }], vendor: { sessionKey: 'res-secret' } },
      }),
    );
    const parsed = parseCacheFile(file, '/r/vnet-c1-eth0', '/r');
    if (!parsed.ok) throw new Error(parsed.problem.message);
    const e: CacheEntry = redactor.cacheEntry(parsed.entry);
    expect(JSON.stringify([e.config, e.result, e.capabilityArgs])).not.toMatch(/secret"/);
    expect(e.redactions).toEqual(['/config/plugins/0/apiKey', '/result/vendor/sessionKey', '/capabilityArgs/token']);
    expect(e.ips).toEqual(['10.1.0.2']);
  });

  it('does not quote the bytes of a corrupt cache file in its problem message', () => {
    const r = parseCacheFile(Buffer.from('x{"password":"hunter2"}'), '/r/f', '/r');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.problem.kind).toBe('corrupt-json');
      expect(r.problem.message).not.toContain('hunter2');
      expect(r.problem.message).toMatch(/not valid JSON/);
    }
  });
});

describe('redacting libcni cache files as files (bundles)', () => {
  const file = {
    kind: 'cniCacheV1',
    containerId: 'c1',
    config: Buffer.from(JSON.stringify({ name: 'vnet', plugins: [{ type: 'x', apiKey: 'conf-secret' }] })).toString('base64'),
    ifName: 'eth0',
    networkName: 'vnet',
    cniArgs: [['K8S_POD_NAME', 'p'], ['VENDOR_API_KEY', 'args-secret']],
    result: { ips: [{ address: '10.1.0.2/24' }], vendor: { sessionKey: 'res-secret' } },
  };

  it("hides the secrets of the decoded config, the result and CNI_ARGS pairs, keeping the pod's own args", () => {
    const out = redactor.cacheFile(Buffer.from(JSON.stringify(file)));
    const text = out.toString('utf8');
    expect(text).not.toMatch(/-secret/);
    const back = JSON.parse(text) as typeof file;
    expect(back.cniArgs).toEqual([['K8S_POD_NAME', 'p'], ['VENDOR_API_KEY', '[redacted]']]);
    expect(JSON.parse(Buffer.from(back.config, 'base64').toString('utf8'))).toEqual({ name: 'vnet', plugins: [{ type: 'x', apiKey: '[redacted]' }] });
  });

  it('hides them in a file cut short too, and passes a file without secrets as it is', () => {
    const cut = Buffer.from(JSON.stringify({ ...file, config: 'AAAA' }).slice(0, -40));
    expect(redactor.cacheFile(cut).toString('utf8')).not.toMatch(/args-secret/);
    const clean = Buffer.from('{"kind":"cniCacheV1","cniArgs":[["K8S_POD_NAME","p"]]}');
    expect(redactor.cacheFile(clean)).toBe(clean);
  });

  it('hides CNI_ARGS pairs naming a secret in the cache entries the record keeps', () => {
    const parsed = parseCacheFile(Buffer.from(JSON.stringify(file)), '/r/vnet-c1-eth0', '/r');
    if (!parsed.ok) throw new Error(parsed.problem.message);
    const e = redactor.cacheEntry(parsed.entry);
    expect(e.cniArgs).toEqual([['K8S_POD_NAME', 'p'], ['VENDOR_API_KEY', '[redacted]']]);
    expect(e.redactions).toContain('/cniArgs/1/1');
  });
});
