/**
 * Why a CRI call failed, in a sentence a node operator can act on: the
 * socket is missing, refused, not ours to open, the runtime hangs, it is not
 * a CRI runtime, it speaks only the CRI before v1, or it answered an error.
 * Pure: gRPC's status code and details in, a RuntimeProblem out.
 */

import type { RuntimeProblem, RuntimeVersion } from './types.js';

/** gRPC status codes used here (grpc/doc/statuscodes.md). */
export const GRPC = { DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, UNIMPLEMENTED: 12, INTERNAL: 13, UNAVAILABLE: 14 } as const;

export interface CallFailure {
  readonly code: number | null;
  readonly details: string;
}

const MAX_DETAIL_CHARS = 300;
const clip = (s: string) => (s.length > MAX_DETAIL_CHARS ? `${s.slice(0, MAX_DETAIL_CHARS)}…` : s);
/** grpc-js's wording around the cause: "No connection established. Last error: X (2026-…Z). Resolution note: …". */
const tidy = (s: string) =>
  s
    .replace(/\s*Resolution note:.*$/s, '')
    .replace(/\s*\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g, '')
    .replace(/^No connection established\. Last error: /, '')
    .replace(/[.\s]+$/, '')
    .trim();

/** Signs that the other end is no gRPC server (an HTTP/1 server, a line protocol, a closed stream). */
const NOT_GRPC = /protocol error|http2|bad request|received http status code|unexpected|parse error|malformed|frame|goaway|not a grpc|content-type/i;

export function noSocket(path: string): RuntimeProblem {
  return { kind: 'absent', message: `No CRI socket at ${path}: no runtime listens there (containerd or CRI-O not running, or another socket: set --cri-endpoint; "none" turns the runtime's side off).` };
}

export function notASocket(path: string): RuntimeProblem {
  return { kind: 'not-cri', message: `${path} is not a socket, so no CRI runtime answers there: --cri-endpoint should name containerd's or CRI-O's socket.` };
}

export function problemOf(path: string, call: string, f: CallFailure, timeoutMs: number): RuntimeProblem {
  const detail = clip(tidy(f.details) || 'no details');
  if (f.code === GRPC.DEADLINE_EXCEEDED) {
    return { kind: 'timeout', message: `The runtime at ${path} did not answer ${call} within ${timeoutMs / 1000} s: it hangs or is overloaded (the kubelet would see the same).` };
  }
  if (f.code === GRPC.UNIMPLEMENTED) {
    return { kind: 'not-cri', message: `${path} answers gRPC but not the CRI's runtime.v1 ${call} (${detail}): it is not a CRI runtime, or --cri-endpoint names another service's socket.` };
  }
  if (/ENOENT/.test(detail)) return noSocket(path);
  if (/ECONNREFUSED/.test(detail)) return { kind: 'refused', message: `${path} refuses connections: the runtime that made the socket is not running (or is restarting).` };
  if (/EACCES|EPERM/.test(detail)) return { kind: 'denied', message: `Cannot open ${path} (${detail}): asking the runtime needs root.` };
  if ((f.code === GRPC.UNAVAILABLE || f.code === GRPC.INTERNAL || f.code === null) && NOT_GRPC.test(detail)) {
    return { kind: 'not-cri', message: `${path} answers, but not as a CRI runtime (${detail}): --cri-endpoint should name containerd's or CRI-O's socket.` };
  }
  if (f.code === GRPC.UNAVAILABLE) return { kind: 'refused', message: `The runtime at ${path} could not be reached (${detail}).` };
  return { kind: 'error', message: `The runtime at ${path} answered ${call} with an error: ${detail}` };
}

/** A runtime that answered the CRI's v1alpha2 Version but not v1's. */
export function v1alpha2Only(path: string, v: RuntimeVersion): RuntimeProblem {
  return {
    kind: 'v1alpha2-only',
    message: `The runtime at ${path} (${v.name} ${v.version}) speaks only the CRI v1alpha2; cnirec asks runtime.v1 (containerd 1.6 and later, CRI-O 1.20 and later): upgrade the runtime to see its side.`,
  };
}
