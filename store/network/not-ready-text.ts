/** The words of the readiness findings. Pure. */

import { isoFromMs } from '../../lib/index.js';
import { cniErrorCodeText } from './status-answer.js';
import type { NetworkReadiness, PluginReadiness } from './types.js';

/** A finding's subject: the network, or the plugin when no network is known. */
export const readinessSubject = (network: string | null, plugin: string): string => (network === null ? `(unknown network) ${plugin}` : network);

const MAX_MSG_CHARS = 500;

export function answerText(p: PluginReadiness): string {
  const code = p.error?.code ?? null;
  const words = cniErrorCodeText(code);
  const how = code !== null ? `error ${code}${words ? ` (${words})` : ''}` : p.exitCode !== null ? `exit ${p.exitCode}` : 'a failure';
  const msg = p.error?.msg ?? null;
  if (msg === null) return `${how}; its message comes with the next check captured with payloads`;
  return `${how}: "${msg.length > MAX_MSG_CHARS ? `${msg.slice(0, MAX_MSG_CHARS)}…` : msg}"`;
}

export function notReadyMessage(n: NetworkReadiness, failing: PluginReadiness, failedChecks: number): string {
  const name = n.network === null ? `The network of plugin ${failing.plugin} (not known: no stdin captured, no conf lists it)` : `Network "${n.network}"`;
  return (
    `${name} is not ready: plugin ${failing.plugin} answers CNI STATUS with ${answerText(failing)}, since ${isoFromMs(n.sinceMs ?? failing.sinceMs)} ` +
    `(${failedChecks} failing check${failedChecks === 1 ? '' : 's'}). The runtime reports the node NotReady while this holds (containerd 2.0.1 and later ask on every CRI Status); ` +
    `see call ${failing.lastCallId ?? '?'}.`
  );
}

export function flappingMessage(network: string | null, changes: number, windowMin: number): string {
  return (
    `${network === null ? 'A network (not known)' : `Network "${network}"`} went between ready and not ready ${changes} times in ${windowMin} minutes: ` +
    'the node flaps between Ready and NotReady with it. See its timeline at GET /api/v1/node/cni/status.'
  );
}
