/**
 * `cnirec tail`: CNI calls (and libcni cache writes and removals) as they
 * happen, from the daemon's websocket.
 * Human lines by default, NDJSON with --json.
 */

import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { ClientError, headers, type CallSummaryView, type ClientOptions } from './api-client.js';
import { CALL_FILTER_FLAGS, callFilterParams } from './query-commands.js';
import { callLine, dim, red } from './format.js';

export async function tailCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...CALL_FILTER_FLAGS, json: { type: 'boolean' } },
    strict: true,
  });
  const url = new URL(`/api/v1/tail?${callFilterParams(values)}`, client.api);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, { headers: headers(client) });
  return new Promise<number>((resolve, reject) => {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as { type: string; call?: CallSummaryView; entry?: CacheEntryView; gap?: GapView; error?: { message: string } };
      if (values.json) {
        process.stdout.write(`${data.toString()}\n`);
      } else if (msg.call && msg.type === 'call.finished') {
        process.stdout.write(`${callLine(msg.call, msg.call.parentId ? '  └ ' : '')}\n`);
      } else if (msg.call && msg.type === 'call.started') {
        process.stdout.write(dim(`${callLine(msg.call, msg.call.parentId ? '  └ ' : '')}\n`));
      } else if (msg.entry && (msg.type === 'cache.added' || msg.type === 'cache.removed')) {
        process.stdout.write(dim(`${cacheLine(msg.type, msg.entry)}\n`));
      } else if (msg.gap && msg.type === 'tracer.gap') {
        process.stderr.write(red(`${gapLine(msg.gap)}\n`));
      } else if (msg.type === 'error') {
        process.stderr.write(red(`cnirec: ${msg.error?.message ?? 'error from the daemon'}\n`));
      }
    });
    ws.on('unexpected-response', (_req, res) => reject(new ClientError(`the daemon refused the tail: HTTP ${res.statusCode}`)));
    ws.on('error', (err) => reject(new ClientError(`no cnirec daemon answers at ${client.api}: ${err.message}`)));
    ws.on('close', (code, reason) => {
      if (code !== 1000 && code !== 1005) process.stderr.write(`cnirec: tail closed (${code} ${reason.toString()})\n`);
      resolve(code === 1000 || code === 1005 ? 0 : 1);
    });
    process.once('SIGINT', () => ws.close(1000));
  });
}

/** The fields of a tail cache message this command prints. */
interface CacheEntryView {
  readonly path: string;
  readonly containerId: string | null;
  readonly networkName: string | null;
  readonly ifName: string | null;
  readonly pod: { readonly namespace: string | null; readonly name: string } | null;
  readonly ips: readonly string[];
  readonly at: string;
}

function cacheLine(type: string, e: CacheEntryView): string {
  const what = type === 'cache.added' ? 'cache written' : 'cache removed';
  const pod = e.pod ? ` ${e.pod.namespace ?? '?'}/${e.pod.name}` : '';
  const where = e.networkName === null ? e.path : `${e.networkName} ${e.containerId?.slice(0, 12) ?? '?'} ${e.ifName ?? '?'}`;
  return `${e.at} ${what} ${where}${pod}${e.ips.length ? ` ${e.ips.join(',')}` : ''}`;
}

/** The fields of a tail `tracer.gap` message this command prints. */
interface GapView {
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly durationMs: number | null;
  readonly reason: string;
  readonly incompleteCalls: number;
}

function gapLine(g: GapView): string {
  if (g.endedAt === null) return `${g.startedAt} tracer stopped (${g.reason}): calls are not recorded until it is back; ${g.incompleteCalls} in flight marked incomplete`;
  return `${g.endedAt} tracer recording again after a ${((g.durationMs ?? 0) / 1000).toFixed(1)} s gap`;
}
