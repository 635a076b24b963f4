/**
 * A read-only CRI client: Version, Status, ListPodSandbox and
 * PodSandboxStatus over the runtime's unix socket, with @grpc/grpc-js and the
 * hand-written runtime.v1 subset (cri-proto.ts). Nothing else of the CRI is
 * reachable through it: it cannot create, stop or remove anything.
 *
 * Every call has a deadline; a failure comes back as a CriCallError carrying
 * the RuntimeProblem that says why (cri-problem.ts). A runtime that answers
 * runtime.v1 with "unknown service" is asked the CRI's v1alpha2 Version, so an
 * old runtime is named as such instead of as "not a CRI runtime".
 */

import { lstatSync } from 'node:fs';
import { Client, connectivityState, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { CRI_SERVICE, CRI_V1ALPHA2_SERVICE, criType, DECODE_OPTIONS } from './cri-proto.js';
import { conditionsOf, infoOf, sandboxesOf, sandboxStatusOf, versionOf } from './cri-decode.js';
import { grpcTarget } from './cri-endpoint.js';
import { GRPC, noSocket, notASocket, problemOf, v1alpha2Only } from './cri-problem.js';
import type { RuntimeCondition, RuntimeProblem, RuntimeSandbox, RuntimeVersion } from './types.js';

/** CRI calls answer in milliseconds; a runtime slower than this is reported as hanging. */
export const DEFAULT_CRI_TIMEOUT_MS = 5_000;
/** ListPodSandbox of a node with hundreds of pods and their annotations fits easily. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export class CriCallError extends Error {
  constructor(readonly problem: RuntimeProblem) {
    super(problem.message);
    this.name = 'CriCallError';
  }
}

export interface CriStatus {
  readonly conditions: RuntimeCondition[];
  /** Verbose Status only: the runtime's own details, JSON texts by key (containerd: `cniconfig`, `lastCNILoadStatus`…). */
  readonly info: Record<string, string>;
}

export interface CriClient {
  readonly endpoint: string;
  version(): Promise<RuntimeVersion>;
  status(verbose?: boolean): Promise<CriStatus>;
  /** Every sandbox the runtime has, ready or not (addresses not included: PodSandboxStatus has them). */
  listPodSandbox(): Promise<RuntimeSandbox[]>;
  /** null when the runtime no longer has it. */
  podSandboxStatus(id: string): Promise<RuntimeSandbox | null>;
  /**
   * Whether the connection dropped since the last time this was asked (and forgets it): a runtime restarted
   * between two polls answers the next as if nothing happened, but it always drops its connections.
   */
  takeDropped(): boolean;
  close(): void;
}

export interface CriClientOptions {
  readonly timeoutMs?: number;
}

export function createCriClient(socketPath: string, opts: CriClientOptions = {}): CriClient {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CRI_TIMEOUT_MS;
  const client = new Client(grpcTarget(socketPath), credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    // A runtime that restarts must be asked again at the next poll, not after gRPC's backoff of up to two minutes.
    'grpc.max_reconnect_backoff_ms': 1_000,
    'grpc.initial_reconnect_backoff_ms': 200,
  });

  let dropped = false;
  let watching = false;
  let closed = false;
  /** Once connected, notes the connection leaving READY (the runtime went away, even for a moment). */
  const watchConnection = () => {
    if (watching || closed) return;
    const channel = client.getChannel();
    if (channel.getConnectivityState(false) !== connectivityState.READY) return;
    watching = true;
    channel.watchConnectivityState(connectivityState.READY, Date.now() + 3_600_000, (err) => {
      watching = false;
      if (closed) return;
      if (err) watchConnection(); // only the watch's own deadline: watch on
      else dropped = true;
    });
  };

  /** A socket that is not there is said at once, without waiting on a connection. */
  const checkSocket = () => {
    let st;
    try {
      st = lstatSync(socketPath);
    } catch {
      throw new CriCallError(noSocket(socketPath));
    }
    if (!st.isSocket()) throw new CriCallError(notASocket(socketPath));
  };

  const unary = <T>(service: string, method: string, requestType: string, request: object, responseType: string, decode: (o: unknown) => T): Promise<T> => {
    checkSocket();
    const reqType = criType(requestType);
    const resType = criType(responseType);
    return new Promise<T>((resolve, reject) => {
      client.makeUnaryRequest(
        `/${service}/${method}`,
        (value: object) => Buffer.from(reqType.encode(reqType.fromObject(value)).finish()),
        (bytes: Buffer) => resType.toObject(resType.decode(bytes), DECODE_OPTIONS),
        request,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, value?: unknown) => {
          if (err) reject(Object.assign(err, { method }));
          else {
            watchConnection();
            try {
              resolve(decode(value));
            } catch (e) {
              reject(e as Error);
            }
          }
        },
      );
    });
  };

  const failure = (method: string, err: unknown): CriCallError => {
    if (err instanceof CriCallError) return err;
    const e = err as Partial<ServiceError>;
    return new CriCallError(problemOf(socketPath, method, { code: typeof e.code === 'number' ? e.code : null, details: e.details ?? e.message ?? String(err) }, timeoutMs));
  };

  const call = async <T>(method: string, requestType: string, request: object, responseType: string, decode: (o: unknown) => T): Promise<T> => {
    try {
      return await unary(CRI_SERVICE, method, requestType, request, responseType, decode);
    } catch (err) {
      throw failure(method, err);
    }
  };

  return {
    endpoint: socketPath,
    async version() {
      try {
        return await unary(CRI_SERVICE, 'Version', 'VersionRequest', { version: 'v1' }, 'VersionResponse', versionOf);
      } catch (err) {
        if ((err as Partial<ServiceError>).code !== GRPC.UNIMPLEMENTED) throw failure('Version', err);
        // "unknown service runtime.v1.RuntimeService": an old runtime, or no CRI runtime at all.
        const old = await unary(CRI_V1ALPHA2_SERVICE, 'Version', 'VersionRequest', { version: 'v1alpha2' }, 'VersionResponse', versionOf).catch(() => null);
        throw old ? new CriCallError(v1alpha2Only(socketPath, old)) : failure('Version', err);
      }
    },
    status: (verbose = false) => call('Status', 'StatusRequest', { verbose }, 'StatusResponse', (o) => ({ conditions: conditionsOf(o), info: infoOf(o) })),
    listPodSandbox: () => call('ListPodSandbox', 'ListPodSandboxRequest', {}, 'ListPodSandboxResponse', sandboxesOf),
    async podSandboxStatus(id) {
      try {
        return await unary(CRI_SERVICE, 'PodSandboxStatus', 'PodSandboxStatusRequest', { pod_sandbox_id: id, verbose: false }, 'PodSandboxStatusResponse', sandboxStatusOf);
      } catch (err) {
        if ((err as Partial<ServiceError>).code === GRPC.NOT_FOUND) return null;
        throw failure('PodSandboxStatus', err);
      }
    },
    takeDropped() {
      const was = dropped;
      dropped = false;
      return was;
    },
    close() {
      closed = true;
      client.close();
    },
  };
}
