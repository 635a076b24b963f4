import { describe, expect, it } from 'vitest';
import { OtlpConfigError, resolveOtlpConfig, type OtlpSettings } from '../../otel/index.js';

const off: OtlpSettings = { endpoint: '', payloads: 'capped' };
const on: OtlpSettings = { endpoint: 'http://collector:4318', payloads: 'capped' };

const resolve = (settings: OtlpSettings, env: Record<string, string> = {}) => resolveOtlpConfig(settings, env);
const problem = (settings: OtlpSettings, env: Record<string, string> = {}): string => {
  try {
    resolve(settings, env);
  } catch (err) {
    expect(err).toBeInstanceOf(OtlpConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
};

describe('OTLP export configuration', () => {
  it('is off without any endpoint', () => {
    expect(resolve(off)).toBeNull();
    expect(resolve(off, { OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBeNull();
  });

  it('sends both signals to the base URL with the spec paths appended', () => {
    const c = resolve(on)!;
    expect(c.traces).toMatchObject({ url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', timeoutMs: 10_000, compression: 'none', headers: {} });
    expect(c.logs?.url).toBe('http://collector:4318/v1/logs');
    expect(resolve({ endpoint: 'https://gw.example/otlp/', payloads: 'none' })!.traces?.url).toBe('https://gw.example/otlp/v1/traces');
  });

  it.each([
    ['the standard base variable', {}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318' }, 'http://a:4318/v1/traces', 'http://a:4318/v1/logs'],
    ['--otlp-endpoint over OTEL_EXPORTER_OTLP_ENDPOINT', { endpoint: 'http://flag:4318' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318' }, 'http://flag:4318/v1/traces', 'http://flag:4318/v1/logs'],
    ['a signal URL as given, over the base', {}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9999/custom' }, 'http://t:9999/custom', 'http://a:4318/v1/logs'],
    ['only the logs signal when only its URL is set', {}, { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://l:4318/v1/logs' }, null, 'http://l:4318/v1/logs'],
    ['traces alone with OTEL_LOGS_EXPORTER=none', { endpoint: 'http://a:4318' }, { OTEL_LOGS_EXPORTER: 'none' }, 'http://a:4318/v1/traces', null],
  ] as const)('honours %s', (_name, settings, env, traces, logs) => {
    const c = resolve({ ...off, ...settings }, env)!;
    expect(c.traces?.url ?? null).toBe(traces);
    expect(c.logs?.url ?? null).toBe(logs);
  });

  it('turns off with OTEL_SDK_DISABLED=true or both exporters none, and treats empty variables as unset', () => {
    expect(resolve(on, { OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(resolve(on, { OTEL_TRACES_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none' })).toBeNull();
    expect(resolve(off, { OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeNull();
  });

  it('reads headers, the signal list overriding the common one name by name, values %-decoded', () => {
    const c = resolve(on, { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20abc, X-Tenant = t1', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'X-Tenant=logs' })!;
    expect(c.traces!.headers).toEqual({ Authorization: 'Basic abc', 'X-Tenant': 't1' });
    expect(c.logs!.headers).toEqual({ Authorization: 'Basic abc', 'X-Tenant': 'logs' });
  });

  it('reads protocol, timeout and compression, per signal first', () => {
    const c = resolve(on, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/protobuf', OTEL_EXPORTER_OTLP_TIMEOUT: '2500', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' })!;
    expect(c.traces).toMatchObject({ protocol: 'http/json', timeoutMs: 2500, compression: 'gzip' });
    expect(c.logs).toMatchObject({ protocol: 'http/protobuf' });
  });

  it('builds the resource attributes, OTEL_SERVICE_NAME over a service.name in OTEL_RESOURCE_ATTRIBUTES', () => {
    const c = resolve(on, { OTEL_RESOURCE_ATTRIBUTES: 'k8s.node.name=node-1,service.name=ignored,deployment.environment=prod%2Feu', OTEL_SERVICE_NAME: 'cnirec-eu' })!;
    expect(c.resourceAttributes).toEqual({ 'k8s.node.name': 'node-1', 'service.name': 'cnirec-eu', 'deployment.environment': 'prod/eu' });
  });

  it('shows the endpoint without credentials or query', () => {
    expect(resolve({ endpoint: 'https://user:pw@gw.example:443/otlp?key=s3cret', payloads: 'none' })!.traces!.displayUrl).toBe('https://gw.example/otlp/v1/traces');
  });

  it.each([
    ['an endpoint that is no URL', { endpoint: 'not a url' }, {}, /--otlp-endpoint \(CNIREC_OTLP_ENDPOINT\) is not a URL/],
    ['a gRPC-style or other scheme', { endpoint: 'grpc://collector:4317' }, {}, /must be an http:\/\/ or https:\/\/ URL/],
    ['a bad standard endpoint', {}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' }, /OTEL_EXPORTER_OTLP_ENDPOINT is not a URL/],
    ['a bad signal endpoint', on, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://x/' }, /OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http/],
    ['the gRPC protocol', on, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported.*4318/],
    ['an unknown protocol', on, { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'thrift' }, /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/protobuf or http\/json/],
    ['a header without =', on, { OTEL_EXPORTER_OTLP_HEADERS: 'a=b,Authorization' }, /OTEL_EXPORTER_OTLP_HEADERS must be .*entry 2 is not key=value/],
    ['a header name with a space', on, { OTEL_EXPORTER_OTLP_HEADERS: 'X Token=1' }, /"X Token" is not a valid HTTP header name/],
    ['a header value with a line break', on, { OTEL_EXPORTER_OTLP_HEADERS: 'X-Token=a%0D%0AHost: evil' }, /value of header "X-Token" holds a line break/],
    ['a malformed %-escape', on, { OTEL_EXPORTER_OTLP_HEADERS: 'X-Token=%zz' }, /malformed %-escape/],
    ['a timeout that is no number', on, { OTEL_EXPORTER_OTLP_TIMEOUT: '10s' }, /OTEL_EXPORTER_OTLP_TIMEOUT must be a whole number of milliseconds/],
    ['an unknown compression', on, { OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' }, /must be gzip or none/],
    ['an exporter other than otlp', on, { OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER=zipkin is not supported/],
    ['resource attributes without =', on, { OTEL_RESOURCE_ATTRIBUTES: 'k8s.node.name' }, /OTEL_RESOURCE_ATTRIBUTES must be/],
  ] as const)('refuses %s in one sentence', (_name, settings, env, message) => {
    const text = problem({ ...off, ...settings }, env);
    expect(text).toMatch(message);
    expect(text).not.toMatch(/[.!?]\s+[A-Z]/);
    expect(text.endsWith('.')).toBe(true);
  });

  it('never quotes a header value or URL credentials in an error', () => {
    expect(problem(on, { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20s3cr3t%0A' })).not.toContain('s3cr3t');
    expect(problem({ endpoint: 'http//user:s3cr3t@collector', payloads: 'none' })).not.toContain('s3cr3t');
  });
});
