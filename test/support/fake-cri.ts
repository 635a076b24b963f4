/**
 * Fake CRI runtimes on unix sockets, for unit and integration tests: one that
 * answers runtime.v1 from a state the test changes, one that speaks only
 * v1alpha2, one that hangs (accepts and never answers), one that is no gRPC
 * server at all (HTTP/1.1), one that serves gRPC but not the CRI. The e2e
 * suite drives the real containerd instead.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type protobuf from 'protobufjs';
import { criType, DECODE_OPTIONS } from '../../collector/runtime/cri-proto.js';

export interface FakeSandbox {
  id: string;
  namespace: string;
  name: string;
  uid?: string;
  state?: 'ready' | 'notready';
  createdAtMs?: number;
  ip?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface FakeRuntimeState {
  name: string;
  version: string;
  conditions: { type: string; status: boolean; reason?: string; message?: string }[];
  sandboxes: FakeSandbox[];
  /** Every call fails with this gRPC error while set. */
  failWith: { code: number; details: string } | null;
  /** Calls seen, by method. */
  calls: Record<string, number>;
}

export interface FakeCri {
  readonly socket: string;
  readonly state: FakeRuntimeState;
  /** Stops serving and serves again on the same socket, as a restarted runtime (gRPC fakes only). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export type FakeKind = 'cri' | 'v1alpha2' | 'hang' | 'http1' | 'other-grpc';

const codec = (t: protobuf.Type) => ({
  serialize: (v: object) => Buffer.from(t.encode(t.fromObject(v)).finish()),
  deserialize: (b: Buffer) => t.toObject(t.decode(b), DECODE_OPTIONS),
});

function method(service: string, name: string, req: string, res: string) {
  const q = codec(criType(req));
  const r = codec(criType(res));
  return {
    path: `/${service}/${name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: q.serialize,
    requestDeserialize: q.deserialize,
    responseSerialize: r.serialize,
    responseDeserialize: r.deserialize,
  };
}

const nanos = (ms: number) => (BigInt(ms) * 1_000_000n).toString();

function sandboxMessage(s: FakeSandbox) {
  return {
    id: s.id,
    metadata: { name: s.name, namespace: s.namespace, uid: s.uid ?? `uid-${s.id}`, attempt: 0 },
    state: s.state === 'notready' ? 'SANDBOX_NOTREADY' : 'SANDBOX_READY',
    created_at: nanos(s.createdAtMs ?? 1_700_000_000_000),
    labels: s.labels ?? {},
    annotations: s.annotations ?? {},
  };
}

export async function startFakeCri(kind: FakeKind = 'cri', initial: Partial<FakeRuntimeState> = {}): Promise<FakeCri> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cnirec-fake-cri-'));
  const socket = path.join(dir, 'cri.sock');
  const state: FakeRuntimeState = {
    name: 'fakerd',
    version: '1.0.0',
    conditions: [
      { type: 'RuntimeReady', status: true },
      { type: 'NetworkReady', status: true },
    ],
    sandboxes: [],
    failWith: null,
    calls: {},
    ...initial,
  };

  if (kind === 'hang' || kind === 'http1') {
    const sockets = new Set<Socket>();
    const server: NetServer = createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
      if (kind === 'http1') s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    return {
      socket,
      state,
      restart: () => Promise.reject(new Error('only a gRPC fake restarts')),
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  let server = new Server();
  const count = (name: string) => (state.calls[name] = (state.calls[name] ?? 0) + 1);
  type Cb = sendUnaryData<unknown>;
  type Call = ServerUnaryCall<{ pod_sandbox_id?: string }, unknown>;
  const answer = (name: string, cb: Cb, value: () => unknown) => {
    count(name);
    if (state.failWith) cb(state.failWith);
    else cb(null, value());
  };
  const service = kind === 'v1alpha2' ? 'runtime.v1alpha2.RuntimeService' : 'runtime.v1.RuntimeService';
  const serve = async () => {
    if (kind !== 'other-grpc') {
      const definition: ServiceDefinition = {
        Version: method(service, 'Version', 'VersionRequest', 'VersionResponse'),
        Status: method(service, 'Status', 'StatusRequest', 'StatusResponse'),
        ListPodSandbox: method(service, 'ListPodSandbox', 'ListPodSandboxRequest', 'ListPodSandboxResponse'),
        PodSandboxStatus: method(service, 'PodSandboxStatus', 'PodSandboxStatusRequest', 'PodSandboxStatusResponse'),
      } as unknown as ServiceDefinition;
      const impl: UntypedServiceImplementation = {
        Version: (_call: Call, cb: Cb) =>
          answer('Version', cb, () => ({ version: '0.1.0', runtime_name: state.name, runtime_version: state.version, runtime_api_version: kind === 'v1alpha2' ? 'v1alpha2' : 'v1' })),
        Status: (_call: Call, cb: Cb) =>
          answer('Status', cb, () => ({ status: { conditions: state.conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason ?? '', message: c.message ?? '' })) } })),
        ListPodSandbox: (_call: Call, cb: Cb) => answer('ListPodSandbox', cb, () => ({ items: state.sandboxes.map(sandboxMessage) })),
        PodSandboxStatus: (call: Call, cb: Cb) => {
          const s = state.sandboxes.find((x) => x.id === call.request.pod_sandbox_id);
          if (!s) {
            count('PodSandboxStatus');
            cb({ code: status.NOT_FOUND, details: `an error occurred when try to find sandbox: not found` });
            return;
          }
          answer('PodSandboxStatus', cb, () => ({ status: { ...sandboxMessage(s), network: { ip: s.ip ?? '', additional_ips: [] } } }));
        },
      } as unknown as UntypedServiceImplementation;
      server.addService(definition, impl);
    }
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
  };
  await serve();
  return {
    socket,
    state,
    async restart() {
      server.forceShutdown();
      rmSync(socket, { force: true });
      server = new Server();
      await serve();
    },
    close: async () => {
      server.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
