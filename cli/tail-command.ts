/**
 * `cnirec tail`: CNI calls (and libcni cache writes and removals) as they
 * happen, from the daemon's websocket. Human lines by default, the
 * daemon's messages as NDJSON with --json.
 *
 * A delegated call (host-local under bridge) ends before the call that ran
 * it, so its line is held briefly and printed under its parent's when that
 * one ends; a parent still running after HOLD_MS lets it through, marked
 * with whose it is. With --since, the replayed calls come first and a line
 * on stderr says where the live ones begin.
 */

import WebSocket from 'ws';
import type { CallSummary, RuntimeStatusBody, TailCacheEntry, TailGap, TailServerMessage } from '../api/index.js';

type TailCallMessage = Extract<TailServerMessage, { call: CallSummary }>;
import { headers, type ClientOptions } from './api-client.js';
import { CALL_FILTER_FLAGS, callFilterQuery } from './calls-command.js';
import { ClientError } from './errors.js';
import { parseCommand } from './flags.js';
import { callLine } from './format.js';
import { dim, red, stderr, stdout, yellow } from './output.js';
import { safe } from './terminal-text.js';

export const TAIL_USAGE = `usage: cnirec tail [--pod NS/NAME] [--namespace NS] [--command C] [--plugin P] [--failed]
                  [--include-version] [--since T] [--json]`;

/** How long a delegated call's line waits for its parent's. */
const HOLD_MS = 2_000;

export async function tailCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(args, { ...CALL_FILTER_FLAGS, json: { type: 'boolean' } }, TAIL_USAGE);
  const url = new URL('/api/v1/tail', client.api);
  for (const [k, v] of Object.entries(callFilterQuery(values, TAIL_USAGE))) if (v !== undefined) url.searchParams.set(k, v);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url, { headers: headers(client), handshakeTimeout: client.timeoutMs });
  const printer = createTailPrinter((lines) => stdout.lines(lines));

  return new Promise<number>((resolve, reject) => {
    let refused: string | null = null;
    ws.on('message', (data) => {
      const text = data.toString();
      if (values.json) {
        stdout.raw(`${text}\n`);
        return;
      }
      const msg = JSON.parse(text) as TailServerMessage;
      switch (msg.type) {
        case 'call.started':
        case 'call.finished':
        case 'call.updated':
          printer.call(msg.type, msg.call);
          break;
        case 'cache.added':
        case 'cache.removed':
          stdout.line(dim(cacheLine(msg.type, msg.entry)));
          break;
        case 'tracer.gap':
          stderr.line(red(gapLine(msg.gap)));
          break;
        case 'runtime.readiness':
          stderr.line(runtimeReadinessLine(msg.runtime));
          break;
        case 'capture.changed':
          stderr.line(dim(`── capture: ${msg.capture.mode === 'full' ? 'payloads on' : 'payloads off'} (${safe(msg.capture.reason)})${msg.capture.until ? ` until ${msg.capture.until}` : ''} ──`));
          break;
        case 'replay.done':
          stderr.line(dim(`── ${msg.calls} recorded calls replayed${msg.capped ? ` (capped: ${msg.message ?? ''})` : ''}; live from here ──`));
          break;
        case 'error':
          // A refused query comes before the close (4400): say it once, as the reason.
          refused = msg.error.message;
          break;
        default:
          break;
      }
    });
    ws.on('unexpected-response', (_req, res) => reject(new ClientError(`the daemon refused the tail: HTTP ${res.statusCode}${res.statusCode === 401 ? ' (pass --token or set CNIREC_TOKEN)' : ''}`)));
    ws.on('error', (err) => reject(new ClientError(`no cnirec daemon answers at ${client.api} (${(err as NodeJS.ErrnoException).code ?? err.message}): start it (sudo cnirec run) or pass --api URL`)));
    ws.on('close', (code, reason) => {
      printer.flush();
      if (code === 1000 || code === 1005) return resolve(0);
      reject(new ClientError(refused ?? `the tail closed (${code}${reason.length > 0 ? ` ${safe(reason.toString())}` : ''})`));
    });
    const stop = () => ws.close(1000);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** The runtime's readiness changed: one line, red while it is not ready or cannot be asked. */
export function runtimeReadinessLine(r: RuntimeStatusBody): string {
  if (!r.reachable) return red(`── runtime: cannot be asked (${safe(r.error ?? '?')}) ──`);
  const conditions = r.conditions.map((c) => `${safe(c.type)}=${c.status}${c.status ? '' : ` (${safe([c.reason, c.message].filter(Boolean).join(': '))})`}`).join(', ');
  const paint = r.conditions.every((c) => c.status) ? dim : red;
  return paint(`── runtime ${safe(r.name ?? '')} ${safe(r.version ?? '')}: ${conditions} ──`);
}

export interface TailPrinter {
  call(type: TailCallMessage['type'], call: CallSummary): void;
  /** Prints what is held (the socket closed). */
  flush(): void;
}

/**
 * Orders the tail's call lines into trees. Pure but for its timer; `print` gets whole lines. Starts are
 * printed at once (dim, indented under a parent that is running); an ended delegated call waits for
 * its parent's end, to be printed under it. An update of a call still held replaces it there; of one
 * printed already, it is one more line, marked, saying what came after the plugin exited.
 */
export function createTailPrinter(print: (lines: string[]) => void, holdMs = HOLD_MS): TailPrinter {
  const line = (c: CallSummary, depth: number) => callLine(c, { time: 'absolute', indent: depth === 0 ? '' : `${'  '.repeat(depth - 1)}└ ` });
  /** Calls started and not yet ended, with their depth. */
  const running = new Map<string, number>();
  /** Ended calls with the delegated calls that ended before them. */
  interface Subtree {
    readonly call: CallSummary;
    readonly children: Subtree[];
  }
  /** Calls printed as they ended, with their depth (the last few hundred): a late child goes under its line. */
  const printed = new Map<string, number>();
  const remember = (t: Subtree, depth: number) => {
    printed.set(t.call.id, depth);
    for (const c of t.children) remember(c, depth + 1);
    while (printed.size > 500) printed.delete(printed.keys().next().value!);
  };
  /** Ended delegated calls waiting for their parent's end, by parent id. */
  const held = new Map<string, { subtree: Subtree; timer: NodeJS.Timeout }[]>();
  /** Swaps an updated call into the held subtree that has it; false when none has. */
  const replaceHeld = (c: CallSummary): boolean => {
    const swap = (t: Subtree): Subtree | null => {
      if (t.call.id === c.id) return { call: c, children: t.children };
      for (const [i, child] of t.children.entries()) {
        const swapped = swap(child);
        if (swapped) return { call: t.call, children: t.children.map((x, j) => (j === i ? swapped : x)) };
      }
      return null;
    };
    for (const entries of held.values()) {
      for (const entry of entries) {
        const swapped = swap(entry.subtree);
        if (swapped) {
          entry.subtree = swapped;
          return true;
        }
      }
    }
    return false;
  };

  const render = (t: Subtree, depth: number, note = ''): string[] => [
    `${line(t.call, depth)}${note}`,
    ...t.children.flatMap((child) => render(child, depth + 1)),
  ];
  const take = (parentId: string): Subtree[] => {
    const children = held.get(parentId) ?? [];
    held.delete(parentId);
    return children.map((h) => {
      clearTimeout(h.timer);
      return h.subtree;
    });
  };
  const whose = (parentId: string, still: boolean) => `  ${yellow(`(delegated by ${parentId}${still ? ', still running' : ''})`)}`;

  return {
    call(type, c) {
      if (type === 'call.updated') {
        if (replaceHeld(c)) return;
        const depth = printed.get(c.id) ?? 0;
        return print([`${line(c, depth)}  ${yellow(`(updated: ${updateNote(c)})`)}`]);
      }
      if (type === 'call.started') {
        const depth = c.parentId !== null && running.has(c.parentId) ? running.get(c.parentId)! + 1 : 0;
        running.set(c.id, depth);
        print([dim(line(c, depth))]);
        return;
      }
      running.delete(c.id);
      const subtree: Subtree = { call: c, children: take(c.id) };
      const parentId = c.parentId;
      if (parentId === null) {
        remember(subtree, 0);
        return print(render(subtree, 0));
      }
      if (!running.has(parentId)) {
        // Its parent ended already (a replay sends calls in the order they started): under it if it was just printed.
        const parentDepth = printed.get(parentId);
        remember(subtree, (parentDepth ?? 0) + 1);
        return print(render(subtree, (parentDepth ?? 0) + 1, parentDepth === undefined ? whose(parentId, false) : ''));
      }
      // Its parent is still running: under the parent's line once that one ends, or on its own after holdMs.
      const entry = {
        subtree,
        timer: setTimeout(() => {
          held.set(parentId, (held.get(parentId) ?? []).filter((e) => e !== entry));
          print(render(entry.subtree, 1, whose(parentId, true)));
        }, holdMs).unref(),
      };
      held.set(parentId, [...(held.get(parentId) ?? []), entry]);
    },
    flush() {
      for (const parentId of [...held.keys()]) for (const t of take(parentId)) print(render(t, 1, whose(parentId, false)));
    },
  };
}

/** What an update of an ended call brought: `2 bytes of stderr written after the plugin exited`. */
export function updateNote(c: CallSummary): string {
  const late = (['stdout', 'stderr'] as const).flatMap((s) => {
    const from = c.outputAfterExit[s];
    return from === null ? [] : [`${Math.max(0, c.payload[s].totalBytes - from)} bytes of ${s}`];
  });
  return late.length > 0 ? `${late.join(' and ')} written after the plugin exited` : 'its descendants ended after it';
}

function cacheLine(type: 'cache.added' | 'cache.removed', e: TailCacheEntry): string {
  const what = type === 'cache.added' ? 'cache written' : 'cache removed';
  const pod = e.pod ? ` ${safe(e.pod.namespace ?? '?')}/${safe(e.pod.name)}` : '';
  const where = e.networkName === null ? safe(e.path) : `${safe(e.networkName)} ${safe(e.containerId?.slice(0, 12) ?? '?')} ${safe(e.ifName ?? '?')}`;
  return `${e.at} ${what} ${where}${pod}${e.ips.length ? ` ${e.ips.map(safe).join(',')}` : ''}`;
}

function gapLine(g: TailGap): string {
  if (g.endedAt === null) return `${g.startedAt} tracer stopped (${safe(g.reason)}): calls are not recorded until it is back; ${g.incompleteCalls} in flight marked incomplete`;
  return `${g.endedAt} tracer recording again after a ${((g.durationMs ?? 0) / 1000).toFixed(1)} s gap`;
}
