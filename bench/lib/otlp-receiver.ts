/**
 * An OTLP/HTTP receiver for tests and benchmarks: it decodes what arrives with the official
 * OTLP .proto definitions (opentelemetry-proto, as shipped unmodified in
 * @elastic/mockotlpserver) through protobufjs, never with the exporter's own
 * serializer, so a test sees what a real collector would. It can refuse
 * requests (a status code) and be stopped and started again on its port.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

const require = createRequire(import.meta.url);
const PROTO_ROOT = path.dirname(require.resolve('@elastic/mockotlpserver/package.json'));

let root: protobuf.Root | null = null;

/** The official definitions, loaded once per process. */
function protoRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => path.join(PROTO_ROOT, target);
  r.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto', 'opentelemetry/proto/collector/logs/v1/logs_service.proto'], { keepCase: false });
  root = r;
  return r;
}

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly { readonly name: string; readonly timeNs: bigint; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly status: { readonly code: number; readonly message: string };
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly scope: string;
}

export interface ReceivedLog {
  readonly timeNs: bigint;
  readonly observedNs: bigint;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly body: AttributeValue;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly traceId: string;
  readonly spanId: string;
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

export interface ReceivedRequest {
  readonly path: string;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Date.now() when the request's body was complete. */
  readonly atMs: number;
  readonly status: number;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port> (the base: the exporter appends /v1/traces and /v1/logs). */
  readonly url: string;
  readonly port: number;
  /** Spans and log records from requests answered 200, in arrival order. */
  readonly spans: ReceivedSpan[];
  readonly logs: ReceivedLog[];
  readonly requests: ReceivedRequest[];
  /** Every request body as it arrived (gzip undone), decoded or not: for checks on the bytes themselves. */
  readonly rawBodies: Buffer[];
  /** Each accepted span with the time its request arrived. */
  readonly spanArrivals: { readonly span: ReceivedSpan; readonly atMs: number }[];
  /** Answer every request with this status (and decode nothing) until set back to 200. */
  respondWith(status: number): void;
  /** Closes the port (connections refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const r = protoRoot();
  const TraceRequest = r.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  const LogsRequest = r.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest');
  const TraceResponse = r.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  const LogsResponse = r.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse');

  const spans: ReceivedSpan[] = [];
  const logs: ReceivedLog[] = [];
  const requests: ReceivedRequest[] = [];
  const rawBodies: Buffer[] = [];
  const spanArrivals: { span: ReceivedSpan; atMs: number }[] = [];
  let status = 200;

  const handle = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const atMs = Date.now();
    const contentType = String(req.headers['content-type'] ?? '');
    const url = req.url ?? '';
    requests.push({ path: url, contentType, headers: req.headers, atMs, status });
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/plain' }).end('refused by the test');
      return;
    }
    const raw = req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
    rawBodies.push(raw);
    const json = contentType.includes('json');
    if (url === '/v1/traces') {
      const msg = json ? fromOtlpJson(JSON.parse(raw.toString('utf8'))) : TraceRequest.toObject(TraceRequest.decode(raw), DECODE);
      for (const span of flattenSpans(msg)) {
        spans.push(span);
        spanArrivals.push({ span, atMs });
      }
      reply(res, json, TraceResponse);
    } else if (url === '/v1/logs') {
      const msg = json ? fromOtlpJson(JSON.parse(raw.toString('utf8'))) : LogsRequest.toObject(LogsRequest.decode(raw), DECODE);
      logs.push(...flattenLogs(msg));
      reply(res, json, LogsResponse);
    } else {
      res.writeHead(404).end();
    }
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (err) {
        // A request the official definitions cannot decode is a test failure: answer 400 and keep it visible.
        requests.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), headers: req.headers, atMs: Date.now(), status: 400 });
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });

  const listen = (p: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        const addr = server.address();
        resolve(typeof addr === 'object' && addr !== null ? addr.port : p);
      });
    });
  const boundPort = await listen(port);
  let listening = true;

  const stop = async () => {
    if (!listening) return;
    listening = false;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    url: `http://127.0.0.1:${boundPort}`,
    port: boundPort,
    spans,
    logs,
    requests,
    rawBodies,
    spanArrivals,
    respondWith(code) {
      status = code;
    },
    stop,
    async start() {
      if (listening) return;
      await listen(boundPort);
      listening = true;
    },
    close: stop,
  };
}

const DECODE: protobuf.IConversionOptions = { longs: String, bytes: String, enums: Number, defaults: true, arrays: true, objects: true, oneofs: true };

function reply(res: ServerResponse, json: boolean, type: protobuf.Type) {
  if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(Buffer.from(type.encode(type.create({})).finish()));
}

/** OTLP/JSON's ids are hex (not proto3 JSON's base64): turn them into the base64 the proto decoding gives, so both flatten alike. */
function fromOtlpJson(value: unknown): Record<string, unknown> {
  const walk = (v: unknown, key: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v === 'string' && /^(traceId|spanId|parentSpanId)$/.test(key)) return Buffer.from(v, 'hex').toString('base64');
    return v;
  };
  return walk(value, '') as Record<string, unknown>;
}

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const hex = (b64: unknown): string => Buffer.from(String(b64 ?? ''), 'base64').toString('hex');
const ns = (v: unknown): bigint => BigInt(String(v ?? '0'));

const VALUE_KINDS = ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] as const;

function anyValue(v: unknown): AttributeValue {
  const o = (v ?? {}) as Obj;
  // protobufjs names the oneof member that was set in `value`; OTLP/JSON has only that member.
  const kind = typeof o.value === 'string' ? o.value : VALUE_KINDS.find((k) => o[k] !== undefined);
  switch (kind) {
    case 'stringValue':
      return String(o.stringValue);
    case 'boolValue':
      return Boolean(o.boolValue);
    case 'intValue':
      return Number(o.intValue);
    case 'doubleValue':
      return Number(o.doubleValue);
    case 'arrayValue':
      return list((o.arrayValue as Obj).values).map(anyValue);
    case 'kvlistValue':
      return JSON.stringify(attrs((o.kvlistValue as Obj).values));
    case 'bytesValue':
      return String(o.bytesValue);
    default:
      return null;
  }
}

function attrs(v: unknown): Record<string, AttributeValue> {
  return Object.fromEntries(list(v).map((kv) => [String(kv.key), anyValue(kv.value)]));
}

function flattenSpans(msg: Obj): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of list(msg.resourceSpans)) {
    const resource = attrs((rs.resource as Obj | undefined)?.attributes);
    for (const ss of list(rs.scopeSpans)) {
      const scope = String((ss.scope as Obj | undefined)?.name ?? '');
      for (const s of list(ss.spans)) {
        const status = (s.status ?? {}) as Obj;
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          traceState: String(s.traceState ?? ''),
          name: String(s.name),
          kind: Number(s.kind),
          startNs: ns(s.startTimeUnixNano),
          endNs: ns(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: list(s.events).map((e) => ({ name: String(e.name), timeNs: ns(e.timeUnixNano), attributes: attrs(e.attributes) })),
          links: list(s.links).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId) })),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

function flattenLogs(msg: Obj): ReceivedLog[] {
  const out: ReceivedLog[] = [];
  for (const rl of list(msg.resourceLogs)) {
    const resource = attrs((rl.resource as Obj | undefined)?.attributes);
    for (const sl of list(rl.scopeLogs)) {
      for (const l of list(sl.logRecords)) {
        out.push({
          timeNs: ns(l.timeUnixNano),
          observedNs: ns(l.observedTimeUnixNano),
          severityNumber: Number(l.severityNumber),
          severityText: String(l.severityText ?? ''),
          body: anyValue(l.body),
          attributes: attrs(l.attributes),
          traceId: hex(l.traceId),
          spanId: hex(l.spanId),
          resource,
        });
      }
    }
  }
  return out;
}
