/**
 * `cnirec pod NS/NAME`: a pod's story on a terminal, the first question
 * people bring ("what happened to pod X?"): its sandboxes in order, each
 * with what is wrong with it now (open findings), libcni's cache entries
 * and its calls as trees (delegated calls indented under their parent,
 * helpers under the call that ran them), each failure with its error. The
 * totals say how long each command took and how many calls failed.
 * `-o json` prints the API's answer as it is.
 */

import type { CallTree, PodStory } from '../api/index.js';
import { getJson, route, type ClientOptions } from './api-client.js';
import { UsageError } from './errors.js';
import { OUTPUT_FLAGS, outputMode, parseCommand, podFlag } from './flags.js';
import { callLine, durationText, outcomeText } from './format.js';
import { bold, dim, green, red, stdout, yellow } from './output.js';
import { safe, safeBlock } from './terminal-text.js';

export const POD_USAGE = 'usage: cnirec pod NAMESPACE/NAME [--uid UID] [--since T] [--until T] [-o json]';

export async function podCommand(args: string[], client: ClientOptions): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    { uid: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, ...OUTPUT_FLAGS },
    POD_USAGE,
    true,
  );
  const mode = outputMode(values, POD_USAGE);
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'which pod? give NAMESPACE/NAME' : `one pod, not ${positionals.length}`, POD_USAGE);
  const { namespace, name } = podFlag(positionals[0]!, 'the pod', POD_USAGE);
  const path = route(`/api/v1/pods/${encodeURIComponent(namespace!)}/${encodeURIComponent(name)}`, { podUid: values.uid, since: values.since, until: values.until });
  const story: PodStory = await getJson(client, path);
  if (mode === 'json') stdout.raw(`${JSON.stringify(story, null, 2)}\n`);
  else stdout.lines(formatPodStory(story));
  return 0;
}

/** The story as terminal lines. Pure, for tests. */
export function formatPodStory(story: PodStory, nowMs = Date.now()): string[] {
  const { pod } = story;
  const uids = pod.uids.length > 1 ? dim(` (${pod.uids.length} pods have had this name; --uid picks one)`) : '';
  const out = [`${bold(`pod ${safe(pod.namespace)}/${safe(pod.name)}`)}  ${pod.uid ? `uid ${safe(pod.uid)}` : 'no uid'}${uids}  ${totalsText(story.calls)}`];
  if (story.truncated) out.push(yellow(`more than 10,000 calls: only the newest are shown (cnirec calls --pod ${safe(pod.namespace)}/${safe(pod.name)} --all lists every one)`));
  for (const sb of story.sandboxes) {
    out.push('', `${bold(`sandbox ${sb.containerId === null ? '(no container id)' : safe(sb.containerId.slice(0, 12))}`)}  ${dim(sb.startedAt)}  ${totalsText(sb.calls)}`);
    if (sb.runtime) out.push(runtimeLine(sb.runtime));
    // What is wrong with it right now, before its calls.
    for (const f of sb.findings) {
      const paint = f.severity === 'critical' ? red : yellow;
      out.push(paint(`  finding ${f.kind} (${f.severity}): ${safeBlock(f.message)}`));
    }
    for (const entry of sb.cache) {
      const where = [entry.networkName, entry.ifName].filter(Boolean).map((s) => safe(s)).join(' ');
      out.push(dim(`  cache: ${where} ${entry.ips.map(safe).join(', ') || 'no IPs'}${entry.removedAt ? ` (removed ${entry.removedAt})` : ''}`));
    }
    for (const call of sb.calls) tree(call, 0, out, nowMs);
  }
  return out;
}

/** What the container runtime says of the sandbox (or said last, once it no longer lists it). */
export function runtimeLine(r: NonNullable<PodStory['sandboxes'][number]['runtime']>): string {
  const state = r.goneAt !== null ? yellow(`gone since ${r.goneAt} (last known: ${r.state})`) : r.state === 'ready' ? green('ready') : yellow('not ready');
  const ips = [r.ip, ...r.additionalIps].filter((ip): ip is string => ip !== null).map(safe).join(', ') || 'no IP';
  return `  runtime: ${state}, ${ips}, created ${r.createdAt}${r.attempt > 0 ? `, attempt ${r.attempt}` : ''}${dim(`  (seen ${r.seenAt})`)}`;
}

/** Every call in the story: top-level ones and all they delegated. */
export function countStoryCalls(story: Pick<PodStory, 'sandboxes'>): number {
  const count = (calls: readonly CallTree[]): number => calls.reduce((n, c) => n + 1 + count(c.children), 0);
  return story.sandboxes.reduce((n, sb) => n + count(sb.calls), 0);
}

function tree(call: CallTree, depth: number, out: string[], nowMs: number): void {
  const indent = '  '.repeat(depth + 1);
  out.push(callLine(call, { time: 'absolute', showPod: false, indent, nowMs }));
  for (const h of call.helpers) {
    const outcome = outcomeText({ status: h.exitCode === null && h.signal === null ? 'running' : 'finished', exitCode: h.exitCode, signal: h.signal });
    // Under the call's command, past the time column.
    out.push(dim(`${' '.repeat(26)}${indent}  helper ${durationText(h.durationMs)} `) + `${outcome}  ${h.argv.map(safe).join(' ')}`);
  }
  for (const child of call.children) tree(child, depth + 1, out, nowMs);
}

/**
 * Per command over top-level calls (a delegated call's time is inside its parent's): the time the
 * ended ones took, and how many there were and failed, so six failed DELs never read as one slow one.
 */
export function totalsText(calls: readonly Pick<CallTree, 'command' | 'durationMs' | 'ok'>[]): string {
  const byCommand = new Map<string, { ms: number; calls: number; failed: number }>();
  for (const c of calls) {
    if (c.command === null) continue;
    const t = byCommand.get(c.command) ?? { ms: 0, calls: 0, failed: 0 };
    t.calls += 1;
    if (c.durationMs !== null) t.ms += c.durationMs;
    if (c.ok === false) t.failed += 1;
    byCommand.set(c.command, t);
  }
  return [...byCommand]
    .map(([command, t]) => {
      const count = t.calls > 1 ? ` ×${t.calls}` : '';
      const failed = t.failed === 0 ? '' : red(t.failed === t.calls ? (t.calls > 1 ? ' all failed' : ' failed') : ` ${t.failed} failed`);
      return `${safe(command)} ${durationText(t.ms)}${count}${failed}`;
    })
    .join('  ');
}
