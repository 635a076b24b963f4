/**
 * How calls look on a terminal: one line a call, coloured only when stdout
 * is a TTY (and NO_COLOR is unset).
 */

import type { CallSummaryView } from './api-client.js';

const useColor = process.stdout.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number) => (s: string) => (useColor ? `\u001b[${code}m${s}\u001b[0m` : s);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);
export const dim = paint(2);
export const bold = paint(1);

export function outcomeText(c: Pick<CallSummaryView, 'status' | 'exitCode' | 'signal'>): string {
  if (c.status === 'running') return yellow('running');
  if (c.status === 'incomplete') return yellow('incomplete');
  if (c.signal !== null) return red(`signal ${c.signal}`);
  return c.exitCode === 0 ? green('exit 0') : red(`exit ${c.exitCode}`);
}

export function durationText(ms: number | null): string {
  if (ms === null) return '-';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${ms.toFixed(1)}ms`;
}

/** One call; `showPod: false` where the pod is said already (a pod's story). A running call shows how long it has run so far (`12.50s+`). */
export function callLine(c: CallSummaryView, indent = '', { showPod = true, nowMs = Date.now() } = {}): string {
  const pod = !showPod ? null : c.pod ? `${c.pod.namespace}/${c.pod.name}` : c.containerId ? `ctr ${c.containerId.slice(0, 12)}` : '';
  const caller = c.parentProcess?.comm ? dim(` by ${c.parentProcess.comm}`) : '';
  return [
    dim(c.startedAt.replace('T', ' ').replace('Z', '')),
    `${indent}${bold((c.command ?? '?').padEnd(7))}`,
    c.plugin.padEnd(12),
    outcomeText(c).padEnd(useColor ? 19 : 10),
    (c.status === 'running' ? `${durationText(Math.max(0, nowMs - Date.parse(c.startedAt)))}+` : durationText(c.durationMs)).padStart(9),
    ...(pod === null ? [] : [pod]),
    dim(c.id) + caller,
  ].join('  ');
}
