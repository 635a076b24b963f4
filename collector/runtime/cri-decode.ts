/**
 * CRI answers (as protobufjs decodes them: DECODE_OPTIONS) → cnirec's shapes.
 * Pure. Whatever a runtime leaves out comes as its proto3 default, so every
 * field is read defensively: a runtime's quirk must not throw here.
 */

import type { RuntimeCondition, RuntimeSandbox, RuntimeVersion } from './types.js';

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const strMap = (v: unknown): Record<string, string> => Object.fromEntries(Object.entries(obj(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));

/** An int64 of nanoseconds (a decimal string) → milliseconds; 0 when absent or not a number. */
export function msOfNanos(v: unknown): number {
  const s = typeof v === 'number' ? String(Math.trunc(v)) : str(v);
  if (!/^-?\d+$/.test(s)) return 0;
  return Number(BigInt(s) / 1_000_000n);
}

export function versionOf(v: unknown): RuntimeVersion {
  const o = obj(v);
  return { name: str(o.runtime_name), version: str(o.runtime_version), apiVersion: str(o.runtime_api_version) };
}

export function conditionsOf(statusResponse: unknown): RuntimeCondition[] {
  const list = obj(obj(statusResponse).status).conditions;
  return (Array.isArray(list) ? list : []).map((c) => {
    const o = obj(c);
    return { type: str(o.type), status: o.status === true, reason: str(o.reason), message: str(o.message) };
  });
}

/** The verbose Status `info` map (JSON texts by key), as given. */
export const infoOf = (response: unknown): Record<string, string> => strMap(obj(response).info);

/**
 * `kubectl apply` keeps the whole manifest of a pod in this annotation, environment values included: it says
 * nothing of the sandbox, and key-based redaction cannot tell a secret inside it. Never kept.
 */
export const DROPPED_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];

const withoutDropped = (m: Record<string, string>): Record<string, string> => {
  for (const k of DROPPED_ANNOTATIONS) delete m[k];
  return m;
};

function sandboxFields(o: Obj): Omit<RuntimeSandbox, 'ip' | 'additionalIps'> {
  const m = obj(o.metadata);
  return {
    id: str(o.id),
    namespace: str(m.namespace),
    name: str(m.name),
    uid: str(m.uid),
    attempt: num(m.attempt),
    state: o.state === 'SANDBOX_READY' || o.state === 0 ? 'ready' : 'notready',
    createdAtMs: msOfNanos(o.created_at),
    labels: strMap(o.labels),
    annotations: withoutDropped(strMap(o.annotations)),
    runtimeHandler: str(o.runtime_handler),
  };
}

export function sandboxesOf(listResponse: unknown): RuntimeSandbox[] {
  const items = obj(listResponse).items;
  return (Array.isArray(items) ? items : [])
    .map((i) => ({ ...sandboxFields(obj(i)), ip: null, additionalIps: [] }))
    .filter((s) => s.id !== '');
}

/** PodSandboxStatus's status, with the addresses the runtime reports; null when it carries no sandbox. */
export function sandboxStatusOf(response: unknown): RuntimeSandbox | null {
  const s = obj(obj(response).status);
  const fields = sandboxFields(s);
  if (fields.id === '') return null;
  const net = obj(s.network);
  const extra = Array.isArray(net.additional_ips) ? net.additional_ips.map((p) => str(obj(p).ip)).filter((ip) => ip !== '') : [];
  return { ...fields, ip: str(net.ip) || null, additionalIps: extra };
}

/**
 * The plugin dirs the runtime itself reads, from its verbose Status: containerd puts go-cni's config there
 * (`cniconfig`: {"PluginDirs": [...], "PluginConfDir": ...}); null when the runtime says nothing of it.
 */
export function pluginDirsOf(info: Readonly<Record<string, string>>): string[] | null {
  const text = info.cniconfig;
  if (text === undefined) return null;
  try {
    const dirs = obj(JSON.parse(text)).PluginDirs;
    const list = Array.isArray(dirs) ? dirs.filter((d): d is string => typeof d === 'string' && d.startsWith('/')) : [];
    return list.length > 0 ? list : null;
  } catch {
    return null;
  }
}
