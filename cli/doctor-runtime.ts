/**
 * `cnirec doctor`'s runtime section: what the container runtime says over
 * the CRI (Status: RuntimeReady, NetworkReady with its reason and message).
 * From the daemon when one answers (its timeline knows since when), else
 * asked directly, read-only, so the doctor works without a daemon too.
 */

import type { RuntimeStatusBody } from '../api/index.js';
import { connectRuntime, createCriClient, CriCallError, type CriEndpointSetting } from '../collector/index.js';
import { bold, dim, green, red, yellow } from './output.js';
import { safe } from './terminal-text.js';

/** What the doctor shows: the daemon's view, or the runtime asked now (no `since`, no leaks). */
export interface DoctorRuntime {
  readonly source: 'daemon' | 'runtime';
  readonly endpoint: string | null;
  readonly reachable: boolean;
  readonly name: string | null;
  readonly version: string | null;
  readonly conditions: readonly { type: string; status: boolean; reason: string; message: string; since: string | null }[];
  readonly error: string | null;
  /** The endpoint was not set: a node without a runtime's socket (podman only) is no problem. */
  readonly looked: boolean;
  readonly leaks: RuntimeStatusBody['leaks'] | null;
}

export const fromDaemon = (r: RuntimeStatusBody, looked: boolean): DoctorRuntime => ({
  source: 'daemon',
  endpoint: r.endpoint,
  reachable: r.reachable,
  name: r.name,
  version: r.version,
  conditions: r.conditions,
  error: r.errorKind === 'off' ? null : r.error,
  looked: looked || r.errorKind === 'absent',
  leaks: r.leaks,
});

/** Asks the runtime itself (Version, Status); null when the runtime's side is off. */
export async function askRuntime(setting: CriEndpointSetting, timeoutMs: number): Promise<DoctorRuntime | null> {
  if (setting.kind === 'off') return null;
  const looked = setting.kind === 'auto';
  try {
    const { client, version } = await connectRuntime(setting, (p) => createCriClient(p, { timeoutMs }));
    try {
      const status = await client.status();
      return { source: 'runtime', endpoint: client.endpoint, reachable: true, name: version.name, version: version.version, conditions: status.conditions.map((c) => ({ ...c, since: null })), error: null, looked, leaks: null };
    } finally {
      client.close();
    }
  } catch (err) {
    const message = err instanceof CriCallError ? err.problem.message : String(err);
    const absent = err instanceof CriCallError && err.problem.kind === 'absent';
    return { source: 'runtime', endpoint: setting.kind === 'fixed' ? setting.path : null, reachable: false, name: null, version: null, conditions: [], error: message, looked: looked && absent, leaks: null };
  }
}

/** The runtime says the node's network is not ready: a problem, as the kubelet sees it. */
export const networkNotReady = (r: DoctorRuntime | null): boolean => r !== null && r.reachable && r.conditions.some((c) => c.type === 'NetworkReady' && !c.status);

export function formatRuntime(r: DoctorRuntime): string[] {
  const out = [bold('runtime (CRI)')];
  if (!r.reachable) {
    out.push(`  ${(r.looked ? dim : yellow)(safe(r.error ?? 'not asked'))}`);
    return out;
  }
  out.push(`  ${safe(`${r.name ?? '?'} ${r.version ?? ''}`.trim())} at ${safe(r.endpoint ?? '?')} ${dim(r.source === 'daemon' ? '(as the daemon asks it)' : '(asked now)')}`);
  const width = Math.max(12, ...r.conditions.map((c) => c.type.length));
  for (const c of r.conditions) {
    const said = [c.reason, c.message].filter((x) => x !== '').map(safe).join(': ');
    out.push(`  ${safe(c.type).padEnd(width)}  ${c.status ? green('true ') : red('false')}${c.since ? dim(` since ${c.since}`) : ''}${said ? `  ${c.status ? dim(said) : red(said)}` : ''}`);
  }
  if (networkNotReady(r)) out.push(`  ${red('NetworkReady is false: the kubelet reports the node NotReady and no new pod gets a network')}`);
  if (r.leaks) {
    const l = r.leaks;
    out.push(`  ${l.judging ? (l.confirmed > 0 ? yellow(`${l.confirmed} leaked attachment${l.confirmed === 1 ? '' : 's'} confirmed: cnirec gc lists them`) : dim('no leaked attachment (the runtime lists every sandbox that holds one)')) : dim(`leaks not judged: ${safe(l.why ?? '')}`)}`);
  }
  return out;
}
