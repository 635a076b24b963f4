/**
 * `cnirec pod NS/NAME`: a pod's story on a terminal, the first question
 * people bring ("what happened to pod X?"): its sandboxes in order, each
 * with its calls as trees (delegated calls indented under their parent,
 * helpers under the call that ran them), the time each command took and
 * libcni's cache entries. `--json` prints the API's answer as it is.
 */

import { parseArgs } from 'node:util';
import { getJson, type CallSummaryView, type ClientOptions } from './api-client.js';
import type { FindingView } from './findings-command.js';
import { bold, callLine, dim, durationText, outcomeText, yellow } from './format.js';

interface HelperSummaryView {
  argv: string[];
  durationMs: number | null;
  exitCode: number | null;
  signal: number | null;
}

interface CallTreeView extends CallSummaryView {
  children: CallTreeView[];
  helpers: HelperSummaryView[];
}

interface CacheEntryView {
  networkName: string | null;
  ifName: string | null;
  ips: string[];
  removedAt: string | null;
}

interface SandboxView {
  containerId: string | null;
  podUid: string | null;
  startedAt: string;
  calls: CallTreeView[];
  totals: Record<string, number>;
  cache: CacheEntryView[];
  /** Absent from daemons older than the field. */
  findings?: Array<Pick<FindingView, 'kind' | 'message'>>;
}

export interface PodStoryView {
  pod: { namespace: string; name: string; uid: string | null; uids: string[] };
  sandboxes: SandboxView[];
  totals: Record<string, number>;
  truncated?: boolean;
}

const USAGE = 'usage: cnirec pod NAMESPACE/NAME [--uid UID] [--since TIME] [--until TIME] [--json]';

export async function podCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { uid: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [namespace, name, extra] = (positionals[0] ?? '').split('/');
  if (!namespace || !name || extra !== undefined || positionals.length !== 1) throw new Error(USAGE);
  const q = new URLSearchParams();
  if (values.uid) q.set('podUid', values.uid);
  if (values.since) q.set('since', values.since);
  if (values.until) q.set('until', values.until);
  const path = `/api/v1/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${q.size > 0 ? `?${q}` : ''}`;
  const story: PodStoryView = await getJson(client, path);
  process.stdout.write(values.json ? `${JSON.stringify(story, null, 2)}\n` : `${formatPodStory(story).join('\n')}\n`);
  return 0;
}

/** The story as terminal lines. Pure, for tests. */
export function formatPodStory(story: PodStoryView): string[] {
  const { pod } = story;
  const uids = pod.uids.length > 1 ? dim(` (${pod.uids.length} pods have had this name; --uid picks one)`) : '';
  const out = [`${bold(`pod ${pod.namespace}/${pod.name}`)}  ${pod.uid ? `uid ${pod.uid}` : 'no uid'}${uids}  ${totalsText(story.totals)}`];
  if (story.truncated) out.push(yellow('more than 10,000 calls: only the newest are shown (cnirec calls --pod … --all lists every one)'));
  for (const sb of story.sandboxes) {
    out.push('', `${bold(`sandbox ${sb.containerId === null ? '(no container id)' : sb.containerId.slice(0, 12)}`)}  ${dim(sb.startedAt)}  ${totalsText(sb.totals)}`);
    for (const f of sb.findings ?? []) out.push(yellow(`  finding ${f.kind}: ${f.message}`));
    for (const entry of sb.cache) {
      const where = [entry.networkName, entry.ifName].filter(Boolean).join(' ');
      out.push(dim(`  cache: ${where} ${entry.ips.join(', ') || 'no IPs'}${entry.removedAt ? ` (removed ${entry.removedAt})` : ''}`));
    }
    for (const call of sb.calls) tree(call, 0, out);
  }
  return out;
}

/** Every call in the story: top-level ones and all they delegated. */
export function countStoryCalls(story: PodStoryView): number {
  const count = (calls: readonly CallTreeView[]): number => calls.reduce((n, c) => n + 1 + count(c.children), 0);
  return story.sandboxes.reduce((n, sb) => n + count(sb.calls), 0);
}

function tree(call: CallTreeView, depth: number, out: string[]): void {
  const indent = '  '.repeat(depth + 1);
  out.push(callLine(call, indent, { showPod: false }));
  for (const h of call.helpers) {
    const outcome = outcomeText({ status: h.exitCode === null && h.signal === null ? 'running' : 'finished', exitCode: h.exitCode, signal: h.signal });
    out.push(dim(`${indent}  helper ${durationText(h.durationMs)} `) + `${outcome}  ${h.argv.join(' ')}`);
  }
  for (const child of call.children) tree(child, depth + 1, out);
}

function totalsText(totals: Record<string, number>): string {
  return Object.entries(totals)
    .map(([command, ms]) => `${command} ${durationText(ms)}`)
    .join('  ');
}
