/**
 * `cnirec findings`: the failure modes the daemon found on this node (DEL
 * and ADD loops, broken or stale cache files, leaked addresses, ADDs that
 * left no cache), newest first, each with what to look at next.
 * `--json` prints the API's items as NDJSON.
 */

import { parseArgs } from 'node:util';
import { getJson, type ClientOptions } from './api-client.js';
import { bold, dim, green, yellow } from './format.js';

export interface FindingView {
  kind: string;
  message: string;
  path: string | null;
  callId: string | null;
  firstSeen: string;
  lastSeen: string;
  resolvedAt: string | null;
}

export async function findingsCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { kind: { type: 'string' }, all: { type: 'boolean' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const q = new URLSearchParams();
  if (values.kind) q.set('kind', values.kind);
  if (values.all) q.set('includeResolved', 'true');
  q.set('limit', values.limit ?? '100');
  const { items }: { items: FindingView[] } = await getJson(client, `/api/v1/findings?${q}`);
  if (values.json) {
    for (const f of items) process.stdout.write(`${JSON.stringify(f)}\n`);
  } else {
    process.stdout.write(`${formatFindings(items, { includeResolved: values.all ?? false }).join('\n')}\n`);
  }
  return 0;
}

/** Findings as terminal lines. Pure, for tests. */
export function formatFindings(items: readonly FindingView[], { includeResolved }: { includeResolved: boolean }): string[] {
  if (items.length === 0) return [green(includeResolved ? 'no findings recorded' : 'no open findings') + dim(includeResolved ? '' : ' (--all shows resolved ones too)')];
  const out: string[] = [];
  for (const f of items) {
    const state = f.resolvedAt === null ? yellow('open') : dim(`resolved ${f.resolvedAt}`);
    out.push(`${bold(f.kind)}  ${state}  ${dim(`first ${f.firstSeen}, last ${f.lastSeen}`)}`, `  ${f.message}`);
    if (f.callId !== null) out.push(dim(`  cnirec show ${f.callId}`));
  }
  return out;
}
