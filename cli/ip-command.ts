/**
 * `cnirec ip ADDRESS`: who held an address and when, from host-local's
 * reservations and libcni's cached results, oldest first: the question
 * behind a leaked or doubly assigned IP.
 */

import type { IpHistory } from '../api/index.js';
import { getJson, type ClientOptions } from './api-client.js';
import { UsageError } from './errors.js';
import { OUTPUT_FLAGS, outputMode, parseCommand } from './flags.js';
import { bold, dim, green, padEnd, stderr, stdout } from './output.js';
import { safe } from './terminal-text.js';
import { ageOf } from './time-text.js';

export const IP_USAGE = 'usage: cnirec ip ADDRESS [-o wide|json]';

export async function ipCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseCommand(args, { ...OUTPUT_FLAGS }, IP_USAGE, true);
  const mode = outputMode(values, IP_USAGE);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'which address? give one IP (10.88.0.5)' : `one address, not ${positionals.length}`, IP_USAGE);
  const history: IpHistory = await getJson(client, `/api/v1/ips/${encodeURIComponent(positionals[0]!)}`);
  if (mode === 'json') {
    stdout.raw(`${JSON.stringify(history, null, 2)}\n`);
    return 0;
  }
  if (history.history.length === 0) {
    stderr.line(`no holder of ${safe(history.ip)} is recorded`);
    return 0;
  }
  stdout.lines(formatIpHistory(history, { wide: mode === 'wide' }));
  return 0;
}

/** Pure, for tests. */
export function formatIpHistory(h: IpHistory, { wide = false, nowMs = Date.now() }: { wide?: boolean; nowMs?: number } = {}): string[] {
  const when = (iso: string) => (wide ? iso : `${ageOf(iso, nowMs)} ago`);
  const rows = h.history.map((x) => [
    when(x.from),
    x.to === null ? green('held') : when(x.to),
    x.source,
    safe(x.network ?? '-'),
    safe(wide ? (x.containerId ?? '-') : (x.containerId?.slice(0, 12) ?? '-')),
    safe(x.ifName ?? '-'),
    x.pod ? safe(`${x.pod.namespace ?? '?'}/${x.pod.name}`) : '-',
    ...(wide ? [safe(x.path)] : []),
  ]);
  const header = ['FROM', 'UNTIL', 'SOURCE', 'NETWORK', 'CONTAINER', 'IFNAME', 'POD', ...(wide ? ['FILE'] : [])];
  return [bold(`ip ${safe(h.ip)}`), ...table(header, rows)];
}

/** Columns as wide as their widest cell; the header in bold. */
export function table(header: readonly string[], rows: readonly string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').replace(/[\ue000-\ue00f]/g, '').length)));
  const render = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : padEnd(c, widths[i]!))).join('  ').trimEnd();
  return [dim(render(header)), ...rows.map(render)];
}
