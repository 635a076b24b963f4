/**
 * Where and how to send OTLP, from cnirec's own two settings and the
 * standard OTEL_* variables every OpenTelemetry SDK reads (the spec's
 * "SDK environment variables" and "OTLP exporter configuration"). Pure:
 * the environment comes in as an object, and every problem is one
 * sentence naming the variable, never quoting a header value.
 *
 * Precedence, per signal: OTEL_EXPORTER_OTLP_{TRACES,LOGS}_ENDPOINT (used as
 * given), else the base URL + `/v1/traces` or `/v1/logs`, the base being
 * --otlp-endpoint / CNIREC_OTLP_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT.
 * Export is off when neither signal has a URL, when OTEL_SDK_DISABLED=true,
 * or per signal with OTEL_{TRACES,LOGS}_EXPORTER=none.
 */

import { parseKeyValueList } from './key-value-list.js';

export const PAYLOAD_MODES = ['none', 'capped', 'full'] as const;
export type PayloadMode = (typeof PAYLOAD_MODES)[number];
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];
export type OtlpSignal = 'traces' | 'logs';

export interface SignalEndpoint {
  readonly url: string;
  /** The URL without credentials or query, for logs and /healthz. */
  readonly displayUrl: string;
  readonly protocol: OtlpProtocol;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly compression: 'none' | 'gzip';
}

export interface OtlpExportConfig {
  /** null: this signal is not sent. At least one of the two is set. */
  readonly traces: SignalEndpoint | null;
  readonly logs: SignalEndpoint | null;
  readonly payloads: PayloadMode;
  /** OTEL_RESOURCE_ATTRIBUTES with OTEL_SERVICE_NAME applied (service.name defaults to `cnirec` later). */
  readonly resourceAttributes: Readonly<Record<string, string>>;
}

export interface OtlpSettings {
  /** --otlp-endpoint / CNIREC_OTLP_ENDPOINT; empty when unset. */
  readonly endpoint: string;
  readonly payloads: PayloadMode;
}

/** A setting or variable that cannot work; the message is one sentence for the terminal. */
export class OtlpConfigError extends Error {
  override readonly name = 'OtlpConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_TIMEOUT_MS = 10_000;
const SIGNAL_PATHS: Readonly<Record<OtlpSignal, string>> = { traces: 'v1/traces', logs: 'v1/logs' };
// RFC 9110 token characters: what an HTTP header name may hold.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Node refuses header values with control characters other than tab (and so would any proxy).
// eslint-disable-next-line no-control-regex
const BAD_HEADER_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** The export settings, or null when export is off. Throws OtlpConfigError. */
export function resolveOtlpConfig(settings: OtlpSettings, env: Env): OtlpExportConfig | null {
  const get = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;

  const base = settings.endpoint.trim() !== '' ? { name: '--otlp-endpoint (CNIREC_OTLP_ENDPOINT)', value: settings.endpoint.trim() } : named('OTEL_EXPORTER_OTLP_ENDPOINT', get);
  if (base) checkUrl(base.name, base.value);

  const signal = (s: OtlpSignal): SignalEndpoint | null => {
    const upper = s.toUpperCase();
    const exporter = get(`OTEL_${upper}_EXPORTER`) ?? 'otlp';
    if (exporter === 'none') return null;
    if (exporter !== 'otlp') throw new OtlpConfigError(`OTEL_${upper}_EXPORTER=${exporter} is not supported: cnirec exports over OTLP ("otlp") or not at all ("none").`);
    const own = named(`OTEL_EXPORTER_OTLP_${upper}_ENDPOINT`, get);
    const url = own ? checkUrl(own.name, own.value) : base ? joinPath(base.value, SIGNAL_PATHS[s]) : null;
    if (url === null) return null;
    return {
      url: url.href,
      displayUrl: displayUrl(url),
      protocol: protocolOf(upper, get),
      headers: headersOf(upper, get),
      timeoutMs: timeoutOf(upper, get),
      compression: compressionOf(upper, get),
    };
  };
  const traces = signal('traces');
  const logs = signal('logs');
  if (traces === null && logs === null) return null;
  return { traces, logs, payloads: settings.payloads, resourceAttributes: resourceAttributesOf(get) };
}

function named(name: string, get: (n: string) => string | undefined): { name: string; value: string } | null {
  const value = get(name);
  return value === undefined ? null : { name, value };
}

function checkUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not quoted: a URL may carry credentials.
    throw new OtlpConfigError(`${name} is not a URL: give the collector's OTLP/HTTP address, e.g. http://otel-collector:4318.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OtlpConfigError(`${name} must be an http:// or https:// URL (OTLP over HTTP, usually port 4318), not ${url.protocol}//.`);
  }
  if (url.hostname === '') throw new OtlpConfigError(`${name} has no host: give the collector's address, e.g. http://otel-collector:4318.`);
  return url;
}

/** The spec's rule for the base endpoint: the signal's path is appended to whatever path it has. */
function joinPath(base: string, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url;
}

function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function protocolOf(upper: string, get: (n: string) => string | undefined): OtlpProtocol {
  const name = get(`OTEL_EXPORTER_OTLP_${upper}_PROTOCOL`) !== undefined ? `OTEL_EXPORTER_OTLP_${upper}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = get(name) ?? 'http/protobuf';
  if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  if (value === 'grpc') {
    throw new OtlpConfigError(`${name}=grpc is not supported: cnirec sends OTLP over HTTP; use http/protobuf (the default) and the collector's OTLP/HTTP port (4318).`);
  }
  throw new OtlpConfigError(`${name} must be http/protobuf or http/json, not "${value}".`);
}

function headersOf(upper: string, get: (n: string) => string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  // The signal's own list overrides the common one, header by header (as the SDKs do).
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', `OTEL_EXPORTER_OTLP_${upper}_HEADERS`]) {
    const text = get(name);
    if (text === undefined) continue;
    const list = parseKeyValueList(text);
    if (!list.ok) throw new OtlpConfigError(`${name} must be a comma-separated list of name=value pairs: ${list.problem}.`);
    for (const [key, value] of list.entries) {
      if (!HEADER_NAME.test(key)) throw new OtlpConfigError(`${name}: "${key}" is not a valid HTTP header name.`);
      if (BAD_HEADER_VALUE.test(value)) throw new OtlpConfigError(`${name}: the value of header "${key}" holds a line break or another control character.`);
      headers[key] = value;
    }
  }
  return headers;
}

function timeoutOf(upper: string, get: (n: string) => string | undefined): number {
  for (const name of [`OTEL_EXPORTER_OTLP_${upper}_TIMEOUT`, 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const text = get(name);
    if (text === undefined) continue;
    const ms = Number(text);
    if (!Number.isInteger(ms) || ms <= 0 || ms > 600_000) throw new OtlpConfigError(`${name} must be a whole number of milliseconds between 1 and 600000, not "${text}".`);
    return ms;
  }
  return DEFAULT_TIMEOUT_MS;
}

function compressionOf(upper: string, get: (n: string) => string | undefined): 'none' | 'gzip' {
  for (const name of [`OTEL_EXPORTER_OTLP_${upper}_COMPRESSION`, 'OTEL_EXPORTER_OTLP_COMPRESSION']) {
    const text = get(name);
    if (text === undefined) continue;
    if (text === 'gzip' || text === 'none') return text;
    throw new OtlpConfigError(`${name} must be gzip or none, not "${text}".`);
  }
  return 'none';
}

function resourceAttributesOf(get: (n: string) => string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  const text = get('OTEL_RESOURCE_ATTRIBUTES');
  if (text !== undefined) {
    const list = parseKeyValueList(text);
    if (!list.ok) throw new OtlpConfigError(`OTEL_RESOURCE_ATTRIBUTES must be a comma-separated list of key=value pairs: ${list.problem}.`);
    for (const [key, value] of list.entries) attributes[key] = value;
  }
  const serviceName = get('OTEL_SERVICE_NAME');
  if (serviceName !== undefined) attributes['service.name'] = serviceName;
  return attributes;
}
