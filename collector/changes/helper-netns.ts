/**
 * The netns a helper's changes were made in, as far as the helpers' argv
 * tell: a helper that `nsenter --net=<path>` or `ip netns exec <name>`
 * ran (exec'd in place, the same pid, or forked, its parent) is in that
 * netns; any other in the host's (shell plugins enter the pod's netns this
 * way; a helper that entered one by other means reads as the host's).
 */

import type { HelperProcess } from '../types.js';

export function helperNetns(h: HelperProcess, helpers: readonly HelperProcess[], podPath: string | null): string {
  for (const prior of helpers) {
    if (prior === h) break;
    if (prior.pid !== h.pid && prior.pid !== h.ppid) continue;
    const path = enteredNetns(prior);
    // /run is /var/run: `ip netns exec` names /var/run/netns/<name>, a runtime may give /run/netns/<name>.
    if (path !== null) return podPath !== null && path.replace(/^\/var\/run\//, '/run/') === podPath.replace(/^\/var\/run\//, '/run/') ? podPath : path;
  }
  return 'host';
}

/** The netns path a launcher's argv names: `nsenter --net=<path>` (or `-n<path>`), `ip netns exec <name>`. */
function enteredNetns(h: HelperProcess): string | null {
  const base = h.path.slice(h.path.lastIndexOf('/') + 1);
  const args = h.argv.slice(1);
  if (base === 'nsenter') {
    for (const a of args) {
      if (a.startsWith('--net=')) return a.slice(6) || null;
      if (a.startsWith('-n') && a.length > 2 && !a.startsWith('--')) return a.slice(2);
      // The program to run: the options end.
      if (!a.startsWith('-')) break;
    }
    return null;
  }
  if (base === 'ip') {
    const i = args.findIndex((a, k) => a === 'netns' && args[k + 1] === 'exec');
    const name = i >= 0 ? args[i + 2] : undefined;
    if (name && !name.includes('/')) return `/var/run/netns/${name}`;
  }
  return null;
}
