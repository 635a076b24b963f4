/**
 * `cnirec cache`: libcni's cached results, what the node believes is
 * attached, newest first: each entry's network, container, interface, pod
 * and addresses, and the ADD that wrote it. `--removed` adds the versions
 * rewritten or deleted (by the DEL named).
 */

import type { CacheList } from '../api/index.js';
import { getJson, route, type ClientOptions } from './api-client.js';
import { intFlag, OUTPUT_FLAGS, outputMode, parseCommand, podFlag } from './flags.js';
import { table } from './ip-command.js';
import { dim, green, stderr, stdout } from './output.js';
import { safe } from './terminal-text.js';
import { ageOf } from './time-text.js';

export const CACHE_USAGE = 'usage: cnirec cache [--pod NS/NAME] [--container ID] [--network NAME] [--removed] [--limit N] [-o wide|json]';

export async function cacheCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(
    args,
    { pod: { type: 'string' }, container: { type: 'string' }, network: { type: 'string' }, removed: { type: 'boolean' }, limit: { type: 'string' }, ...OUTPUT_FLAGS },
    CACHE_USAGE,
  );
  const mode = outputMode(values, CACHE_USAGE);
  if (values.pod !== undefined) podFlag(values.pod, '--pod', CACHE_USAGE);
  const limit = intFlag(values.limit, '--limit', { min: 1, max: 1000, usage: CACHE_USAGE }) ?? 100;
  const list: CacheList = await getJson(
    client,
    route('/api/v1/cache', { pod: values.pod, containerId: values.container, network: values.network, includeRemoved: values.removed ? 'true' : undefined, limit }),
  );
  if (mode === 'json') {
    if (list.items.length > 0) stdout.raw(list.items.map((e) => `${JSON.stringify(e)}\n`).join(''));
    return 0;
  }
  if (list.items.length === 0) {
    stderr.line(values.removed ? 'no cache entries match' : 'no cache entries match (--removed shows rewritten and deleted ones too)');
    return 0;
  }
  stdout.lines(formatCacheList(list, { wide: mode === 'wide' }));
  if (list.items.length === limit) stderr.line(dim(`showing the newest ${limit}; more: --limit N (up to 1000), or narrow with --pod, --container, --network`));
  return 0;
}

/** Pure, for tests. */
export function formatCacheList(list: CacheList, { wide = false, nowMs = Date.now() }: { wide?: boolean; nowMs?: number } = {}): string[] {
  const when = (iso: string) => (wide ? iso : ageOf(iso, nowMs));
  const rows = list.items.map((e) => [
    when(e.fileMtime),
    safe(e.networkName ?? '-'),
    safe(wide ? (e.containerId ?? '-') : (e.containerId?.slice(0, 12) ?? '-')),
    safe(e.ifName ?? '-'),
    e.pod ? safe(`${e.pod.namespace ?? '?'}/${e.pod.name}`) : '-',
    e.ips.map(safe).join(',') || '-',
    e.removedAt !== null ? dim(`removed ${when(e.removedAt)}${e.delCallId ? ` by ${e.delCallId}` : ''}`) : e.supersededAt !== null ? dim('rewritten') : green('live'),
    e.addCallId ?? dim('(ADD not recorded)'),
    ...(wide ? [safe(e.path)] : []),
  ]);
  return table(['WRITTEN', 'NETWORK', 'CONTAINER', 'IFNAME', 'POD', 'IPS', 'STATE', 'ADD CALL', ...(wide ? ['FILE'] : [])], rows);
}
