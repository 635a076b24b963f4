/**
 * What a plugin's environment tells about its call. Only CNI_* and
 * trace-context variables are ever kept (the rest may hold secrets).
 */

import path from 'node:path';
import type { PodRef } from '../types.js';

const TRACE_CONTEXT = new Set(['TRACEPARENT', 'TRACESTATE']);

function isKeptEnvName(name: string): boolean {
  return name.startsWith('CNI_') || TRACE_CONTEXT.has(name);
}

/** `KEY=value` strings to a record of the kept variables only. */
export function keepCniEnv(entries: Iterable<string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const name = entry.slice(0, eq);
    if (isKeptEnvName(name)) env[name] = entry.slice(eq + 1);
  }
  return env;
}

/** CNI_ARGS is `K=V;K=V` (libcni); the K8S_POD_* keys name the pod. Keys and values are trimmed, as libcni's parser does. */
export function parseCniArgs(cniArgs: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!cniArgs) return out;
  for (const pair of cniArgs.split(';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    out.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
  return out;
}

export function podFromCniArgs(cniArgs: string | undefined): PodRef | null {
  return podFromArgs(parseCniArgs(cniArgs));
}

/**
 * The pod named by K8S_POD_* arguments. A name without a namespace (podman
 * sets only K8S_POD_NAME) is not a Kubernetes pod.
 */
export function podFromArgs(args: ReadonlyMap<string, string>): PodRef | null {
  const namespace = args.get('K8S_POD_NAMESPACE');
  const name = args.get('K8S_POD_NAME');
  if (!namespace || !name) return null;
  return {
    namespace,
    name,
    uid: args.get('K8S_POD_UID') || null,
    infraContainerId: args.get('K8S_POD_INFRA_CONTAINER_ID') || null,
  };
}

/**
 * A plugin call is an exec of a binary that sits in one of the CNI_PATH
 * directories. A relative entry (`lib/cni`: libcni joins it to the plugin's
 * name, and the kernel resolves that against the working directory) is
 * taken from `cwd` when it is known.
 */
export function isInCniPath(execPath: string, cniPath: string | undefined, cwd: string | null = null): boolean {
  if (!cniPath) return false;
  const dir = path.posix.dirname(path.posix.normalize(execPath));
  return cniPath
    .split(':')
    .filter((d) => d.length > 0)
    .some((d) => (cwd !== null && !d.startsWith('/') ? path.posix.resolve(cwd, d) : path.posix.normalize(d)).replace(/\/+$/, '') === dir);
}
