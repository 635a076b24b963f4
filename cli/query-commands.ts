/**
 * `cnirec calls`, `cnirec show ID`, `cnirec replay ID`: the daemon's REST
 * API from a terminal.
 */

import { parseArgs } from 'node:util';
import { getJson, getText, type CallDetailView, type CallSummaryView, type ClientOptions, type PayloadView } from './api-client.js';
import { bold, callLine, dim, durationText, outcomeText } from './format.js';

/** Filter flags shared by `calls` and `tail`. */
export const CALL_FILTER_FLAGS = {
  pod: { type: 'string' },
  namespace: { type: 'string' },
  container: { type: 'string' },
  command: { type: 'string' },
  plugin: { type: 'string' },
  failed: { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  'include-version': { type: 'boolean' },
} as const;

/** Query parameters of /api/v1/calls (and the tail) from CLI flags; `--pod ns/name` or `--pod name --namespace ns`. */
export function callFilterParams(values: Record<string, string | boolean | undefined>): URLSearchParams {
  const q = new URLSearchParams();
  const pod = typeof values.pod === 'string' ? values.pod : undefined;
  if (pod?.includes('/')) {
    const [ns, name] = pod.split('/', 2);
    q.set('namespace', ns!);
    q.set('pod', name!);
  } else if (pod) {
    q.set('pod', pod);
  }
  if (typeof values.namespace === 'string') q.set('namespace', values.namespace);
  if (typeof values.container === 'string') q.set('containerId', values.container);
  for (const key of ['command', 'plugin', 'since', 'until'] as const) {
    const v = values[key];
    if (typeof v === 'string') q.set(key, key === 'command' ? v.toUpperCase() : v);
  }
  if (values.failed) q.set('failed', 'true');
  if (values['include-version']) q.set('includeVersion', 'true');
  return q;
}

export async function callsCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...CALL_FILTER_FLAGS, slow: { type: 'string' }, running: { type: 'boolean' }, limit: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } },
    strict: true,
  });
  const q = callFilterParams(values);
  if (values.slow) q.set('minDurationMs', values.slow);
  // Calls started and not ended, oldest last: a hung plugin is the one that has run the longest.
  if (values.running) q.set('status', 'running');
  q.set('limit', values.limit ?? '50');
  let cursor: string | null = null;
  do {
    if (cursor) q.set('cursor', cursor);
    const page: { items: CallSummaryView[]; nextCursor: string | null } = await getJson(client, `/api/v1/calls?${q}`);
    for (const c of page.items) process.stdout.write(values.json ? `${JSON.stringify(c)}\n` : `${callLine(c)}\n`);
    cursor = values.all ? page.nextCursor : null;
  } while (cursor);
  return 0;
}

export async function showCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  const id = positionals[0];
  if (!id) throw new Error('usage: cnirec show CALL_ID');
  const call: CallDetailView = await getJson(client, `/api/v1/calls/${encodeURIComponent(id)}`);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(call, null, 2)}\n`);
    return 0;
  }
  const out: string[] = [callLine(call), ''];
  out.push(`${bold('argv')}  ${call.argv.join(' ')}`);
  for (const [k, v] of Object.entries(call.env)) out.push(`${bold('env')}   ${k}=${v}`);
  out.push('', ...payloadBlock('stdin', call.stdin), ...payloadBlock('stdout', call.stdout), ...payloadBlock('stderr', call.stderr));
  if (call.children.length > 0) {
    out.push(bold('delegated calls'));
    for (const c of call.children) out.push(`  ${callLine(c)}`);
  }
  if (call.helpers.length > 0) {
    out.push(bold('helpers'));
    for (const h of call.helpers) {
      const outcome = outcomeText({ status: h.exitCode === null && h.signal === null ? 'running' : 'finished', exitCode: h.exitCode, signal: h.signal });
      out.push(`  ${durationText(h.durationMs).padStart(9)}  ${outcome}  ${h.argv.join(' ')}`);
      if (h.stderr?.text) out.push(dim(`      ${h.stderr.text.trimEnd().split('\n').join('\n      ')}`));
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

function payloadBlock(name: string, p: PayloadView): string[] {
  if (p.bytes === 0) return [`${bold(name)}  ${dim('(empty)')}`, ''];
  const redacted = p.redacted ? ` (redacted: ${(p.redactedPointers ?? []).join(', ')})` : '';
  const note = dim(`${p.truncated ? ' (truncated)' : ''}${redacted}`);
  const body = p.text ?? dim(`(${p.bytes} bytes, not UTF-8; base64: ${p.base64.slice(0, 120)}${p.base64.length > 120 ? '…' : ''})`);
  return [`${bold(name)}  ${dim(`${p.bytes} bytes`)}${note}`, body.trimEnd(), ''];
}

export async function replayCommand(args: string[], client: ClientOptions): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  const id = positionals[0];
  if (!id) throw new Error('usage: cnirec replay CALL_ID > replay.sh');
  process.stdout.write(await getText(client, `/api/v1/calls/${encodeURIComponent(id)}/replay`));
  return 0;
}
