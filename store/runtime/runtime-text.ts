/** The words of the runtime's findings. Pure. */

import type { NodeAttachment, RuntimeVersion } from '../../collector/index.js';
import { isoFromMs } from '../../lib/index.js';
import type { ConditionState } from './types.js';

/** The one open `network-not-ready` the runtime's NetworkReady makes (CNI networks are named without spaces). */
export const NETWORK_NOT_READY_SUBJECT = 'runtime NetworkReady';

/** A conf dir change recorded just before the runtime said not ready. */
export interface ConfChange {
  readonly path: string;
  readonly change: 'added' | 'changed' | 'removed';
  readonly atMs: number;
  readonly versionId: number;
  readonly previousId: number | null;
}

const MAX_MSG_CHARS = 500;
const clip = (s: string) => (s.length > MAX_MSG_CHARS ? `${s.slice(0, MAX_MSG_CHARS)}…` : s);

export function runtimeName(version: RuntimeVersion | null, endpoint: string | null): string {
  const who = version ? `${version.name} ${version.version}` : 'the runtime';
  return endpoint ? `${who} at ${endpoint}` : who;
}

function confChangeText(c: ConfChange | null, sinceMs: number): string {
  if (c === null) return 'No conf dir change was recorded before it (is the conf dir the runtime reads followed? `cnirec doctor` says which it is).';
  const look = c.change === 'removed' ? `cnirec config show ${c.versionId}` : c.previousId !== null ? `cnirec config diff ${c.previousId} ${c.versionId}` : `cnirec config show ${c.versionId}`;
  const after = Math.max(0, Math.round((sinceMs - c.atMs) / 1000));
  return `It came ${after} s after ${c.path} was ${c.change} (${isoFromMs(c.atMs)}): \`${look}\`.`;
}

export function networkNotReadyMessage(c: ConditionState, who: string, change: ConfChange | null): string {
  const said = [c.reason, c.message].filter((x) => x !== '').map(clip).join(': ');
  return (
    `${who} reports NetworkReady=false since ${isoFromMs(c.sinceMs)}${said ? ` (${said})` : ''}: the kubelet marks the node NotReady and no new pod gets a network while this holds. ` +
    confChangeText(change, c.sinceMs)
  );
}

export function leakedAttachmentMessage(a: NodeAttachment, missingSinceMs: number, who: string): string {
  const addresses = a.addresses.length > 0 ? a.addresses.join(', ') : 'no address';
  const held = [a.cachePath ? `libcni's cache entry ${a.cachePath}` : null, a.reservationPaths.length > 0 ? `host-local's ${a.reservationPaths.join(', ')}` : null].filter((x) => x !== null).join(' and ');
  const pod = a.pod ? ` of pod ${a.pod.namespace}/${a.pod.name}` : '';
  return (
    `Container ${a.containerId}${pod} (network ${a.network ?? '?'}, ${a.ifName ?? '?'}) still holds ${addresses} in ${held}, but ${who} has not listed its sandbox since ${isoFromMs(missingSinceMs)} ` +
    `(checked twice): a DEL never ran, so the address is leaked until it is freed. \`cnirec gc\` lists what a GC would free, \`cnirec gc --apply\` runs the DELs.`
  );
}
