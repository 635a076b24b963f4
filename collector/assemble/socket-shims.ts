/**
 * Plugins that hand their work to a daemon over a socket instead of exec'ing
 * their delegates: Multus in thick mode, where the runtime runs `multus-shim`
 * and `multus-daemon` runs the delegates (flannel, calico, bridge…). The
 * process tree breaks there, so a delegate whose parent process is no call
 * is linked to the shim call running for the same sandbox (CNI_CONTAINERID)
 * when it starts, from another process than the one that ran the shim.
 * Only shims are trusted this way: containerd may run two networks of one
 * pod side by side, and those are two top-level calls.
 */

import type { CallState } from './call-state.js';

export const SOCKET_SHIM_PLUGINS: ReadonlySet<string> = new Set(['multus-shim']);

/** The id of the shim call a new top-level call was made for, or null. The latest shim started wins. */
export function shimParentFor(open: Iterable<CallState>, exec: { containerId: string | undefined; ppid: number; startedAtUs: number }): string | null {
  const { containerId, ppid, startedAtUs } = exec;
  if (!containerId) return null;
  let best: CallState | null = null;
  for (const call of open) {
    const b = call.base;
    // The runtime that ran the shim runs its own calls, not the shim's delegates.
    if (!SOCKET_SHIM_PLUGINS.has(b.plugin) || b.containerId !== containerId || b.ppid === ppid) continue;
    if (b.startedAtUs > startedAtUs || (call.endedAtUs !== null && call.endedAtUs < startedAtUs)) continue;
    if (best === null || b.startedAtUs > best.base.startedAtUs) best = call;
  }
  return best?.base.id ?? null;
}
