/**
 * `cnirec doctor`'s runtime section: what the container runtime says over
 * the CRI (Status: RuntimeReady, NetworkReady with its reason and message).
 * From the daemon when one answers (its timeline knows since when), else
 * asked directly, read-only, so the doctor works without a daemon too.
 */

import { doctorRuntimeFromAnswer, doctorRuntimeFromDaemon, type DoctorRuntime } from '../api/index.js';
import { askRuntimeOnce, type CriEndpointSetting } from '../collector/index.js';
import { bold, dim, green, red, yellow } from './output.js';
import { safe } from './terminal-text.js';

export type { DoctorRuntime };
export const fromDaemon = doctorRuntimeFromDaemon;

/** Asks the runtime itself (Version, Status); null when the runtime's side is off. */
export async function askRuntime(setting: CriEndpointSetting, timeoutMs: number): Promise<DoctorRuntime | null> {
  if (setting.kind === 'off') return null;
  return doctorRuntimeFromAnswer(await askRuntimeOnce(setting, { timeoutMs }), setting.kind === 'auto');
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
