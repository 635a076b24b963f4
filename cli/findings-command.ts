/**
 * `cnirec findings`: what went wrong on this node, the worst first (DEL
 * and ADD loops, then broken or stale cache files and leaked addresses,
 * then ADDs that left no cache file), one item per kind and subject, with
 * how many there are in all and by kind, and what to look at next.
 * `-o json` prints the API's items as NDJSON.
 */

import type { Finding, FindingPage } from '../api/index.js';
import { getJson, route, type ClientOptions } from './api-client.js';
import { UsageError } from './errors.js';
import { intFlag, OUTPUT_FLAGS, outputMode, parseCommand, podFlag } from './flags.js';
import { bold, dim, green, red, stderr, stdout, yellow } from './output.js';
import { safe, safeBlock } from './terminal-text.js';
import { ageOf } from './time-text.js';

export const FINDINGS_USAGE = `usage: cnirec findings [--kind K[,K…]] [--severity critical|warning|info] [--pod NS/NAME]
                      [--resolved] [--limit N | --all] [-o wide|json]`;

const PAGE_FOR_ALL = 500;

export async function findingsCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values } = parseCommand(
    args,
    { kind: { type: 'string' }, severity: { type: 'string' }, pod: { type: 'string' }, resolved: { type: 'boolean' }, limit: { type: 'string' }, all: { type: 'boolean' }, ...OUTPUT_FLAGS },
    FINDINGS_USAGE,
  );
  const mode = outputMode(values, FINDINGS_USAGE);
  const limit = intFlag(values.limit, '--limit', { min: 1, max: 1000, usage: FINDINGS_USAGE });
  if (limit !== undefined && values.all) throw new UsageError('--limit and --all do not go together: --all lists every finding', FINDINGS_USAGE);
  if (values.pod !== undefined) podFlag(values.pod, '--pod', FINDINGS_USAGE);
  const query = { kind: values.kind, severity: values.severity, pod: values.pod, includeResolved: values.resolved ? 'true' : undefined, limit: values.all ? PAGE_FOR_ALL : (limit ?? 50) };

  let cursor: string | null = null;
  let first: FindingPage | null = null;
  let shown = 0;
  const nowMs = Date.now();
  do {
    const page: FindingPage = await getJson(client, route('/api/v1/findings', { ...query, cursor }));
    if (mode === 'json') {
      if (page.items.length > 0) stdout.raw(page.items.map((f) => `${JSON.stringify(f)}\n`).join(''));
    } else {
      if (first === null) stdout.lines(findingsHeader(page, { includeResolved: values.resolved ?? false }));
      stdout.lines(page.items.flatMap((f) => formatFinding(f, { wide: mode === 'wide', nowMs })));
    }
    first ??= page;
    shown += page.items.length;
    cursor = page.nextCursor;
  } while (cursor !== null && values.all);
  if (cursor !== null) stderr.line(dim(`showing ${shown} of ${first!.total}; more: --limit N (up to 1000), --all, or narrow with --severity, --kind, --pod`));
  return 0;
}

/** "3 open findings: 1 critical (del-loop), 2 info (add-without-cache ×2)", or that there are none. Pure. */
export function findingsHeader(page: Pick<FindingPage, 'total' | 'byKind'>, { includeResolved }: { includeResolved: boolean }): string[] {
  const what = includeResolved ? 'findings' : 'open findings';
  if (page.total === 0) return [green(`no ${what}`) + dim(includeResolved ? '' : ' (--resolved shows those that have ended)')];
  const bySeverity = new Map<string, string[]>();
  const counts = new Map<string, number>();
  for (const k of page.byKind) {
    bySeverity.set(k.severity, [...(bySeverity.get(k.severity) ?? []), k.count > 1 ? `${k.kind} ×${k.count.toLocaleString('en-US')}` : k.kind]);
    counts.set(k.severity, (counts.get(k.severity) ?? 0) + k.count);
  }
  const parts = [...bySeverity].map(([severity, kinds]) => paint(severity)(`${counts.get(severity)!.toLocaleString('en-US')} ${severity}`) + ` (${kinds.join(', ')})`);
  return [`${bold(`${page.total.toLocaleString('en-US')} ${what}`)}: ${parts.join(', ')}`];
}

/** One finding as terminal lines: severity, kind, pod, count and times; the message; the call to look at. Pure. */
export function formatFinding(f: Finding, { wide = false, nowMs = Date.now() }: { wide?: boolean; nowMs?: number } = {}): string[] {
  const when = (iso: string) => (wide ? iso : `${ageOf(iso, nowMs)} ago`);
  const pod = f.pod ? `  ${safe(`${f.pod.namespace ?? '?'}/${f.pod.name}`)}` : '';
  const count = f.count !== null ? `  ${f.count}×` : '';
  const state = f.resolvedAt === null ? yellow('open') : dim(`resolved ${when(f.resolvedAt)}`);
  const again = f.occurrences > 1 ? dim(` (found ${f.occurrences} times)`) : '';
  const out = [
    `${paint(f.severity)(f.severity.toUpperCase().padEnd(8))}  ${bold(f.kind)}${pod}${count}  ${state}  ${dim(`last seen ${when(f.lastSeen)}, first ${when(f.firstSeen)}`)}${again}`,
    `  ${safeBlock(f.message)}`,
  ];
  if (f.callId !== null) out.push(dim(`  → cnirec show ${safe(f.callId)}`));
  else if (f.path !== null) out.push(dim(`  → ${safe(f.path)}`));
  return out;
}

function paint(severity: string): (s: string) => string {
  return severity === 'critical' ? red : severity === 'warning' ? yellow : dim;
}
