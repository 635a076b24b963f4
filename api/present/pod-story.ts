/**
 * Builds a pod's story from the store: its top-level calls as trees
 * (delegated calls and helpers nested), the same trees grouped by sandbox,
 * and the time each command took. Everything comes from one read of the
 * pod's call graph (a few set-based queries, no payloads); tests can hand
 * it anything that answers that one question.
 */

import { type CacheReader, type FindingsReader, byStartThenId, type CallStore, type PodCallScope, type StoredCallSummary, type StoredSandbox } from '../../store/index.js';
import { presentSandboxRuntime } from './runtime.js';
import { presentCacheEntry } from './cache.js';
import { summaryFromStored } from './call-summary.js';
import { presentFinding } from './finding.js';
import { failureMessage } from './call-error.js';
import type { CallTree, PodStory, Sandbox } from '../schemas/pod-story.js';
import { presentHelperSummary } from './helper.js';
import { msFromUs } from './time.js';

export type PodStoryReader = Pick<CallStore, 'podCallGraph' | 'failureTexts'>;
export type PodCacheReader = Pick<CacheReader, 'entriesByContainer'>;
export type PodFindingsReader = Pick<FindingsReader, 'openFindingsByContainer'>;

/** Where a sandbox's cache entries, open findings and runtime state come from; each absent when the daemon keeps none. */
export interface PodStorySources {
  readonly cache?: PodCacheReader | null;
  readonly findings?: PodFindingsReader | null;
  readonly runtime?: PodRuntimeReader | null;
}

export type PodRuntimeReader = { sandboxes(ids: readonly string[]): Map<string, StoredSandbox> };

/** What a sandbox shows beside its calls, by container id, as the Sandbox schema wants it. */
export interface SandboxExtras {
  readonly cacheOf?: (containerId: string) => Sandbox['cache'];
  readonly findingsOf?: (containerId: string) => Sandbox['findings'];
  readonly runtimeOf?: (containerId: string) => Sandbox['runtime'];
}

/** Real delegation is two or three levels deep (bridge → host-local); this only stops a corrupt parent chain. */
const MAX_DEPTH = 16;

/** Null when the store has no call for the pod in `scope` (a UID, a time window). */
export function buildPodStory(reader: PodStoryReader, namespace: string, name: string, scope: PodCallScope = {}, sources: PodStorySources = {}): PodStory | null {
  const graph = reader.podCallGraph(namespace, name, scope);
  const { calls } = graph;
  if (calls.length === 0) return null;

  // Children come from the whole graph, not the pod list: a delegated call
  // need not carry the pod's CNI_ARGS to belong to its parent.
  const childrenOf = new Map<string, StoredCallSummary[]>();
  for (const c of [...graph.calls, ...graph.delegated].sort(byStartThenId)) {
    if (c.parentId === null) continue;
    const list = childrenOf.get(c.parentId);
    if (list) list.push(c);
    else childrenOf.set(c.parentId, [c]);
  }

  // A top-level call is the runtime's; a call whose parent is not among the
  // pod's calls is shown as top-level too, so nothing recorded goes missing.
  const ids = new Set(calls.map((c) => c.id));
  // What each failed call said, in one query for all of them.
  const failures = reader.failureTexts([...graph.calls, ...graph.delegated].filter((c) => c.ok === false).map((c) => c.id));
  const errorOf = (id: string) => {
    const t = failures.get(id);
    return t === undefined ? null : failureMessage(t);
  };
  const roots = calls.filter((c) => c.parentId === null || !ids.has(c.parentId));
  const visited = new Set<string>();
  const toTree = (call: StoredCallSummary, depth: number): CallTree => {
    visited.add(call.id);
    const children = depth >= MAX_DEPTH ? [] : (childrenOf.get(call.id) ?? []).filter((c) => !visited.has(c.id));
    // Object.assign onto the summary, not a spread of it: see callFields in store/calls/call-decode.ts.
    return Object.assign(summaryFromStored(call, errorOf(call.id)), {
      children: children.map((c) => toTree(c, depth + 1)),
      helpers: graph.helpers.get(call.id)?.map(presentHelperSummary) ?? [],
    });
  };
  const trees = roots.filter((c) => !visited.has(c.id)).map((c) => toTree(c, 0));

  const uids = [...new Set(calls.map((c) => c.podUid).filter((u): u is string => u !== null))];
  const { cache, findings, runtime } = sources;
  // One query each for every sandbox's cache entries and open findings (few, if any), not one per sandbox.
  const containerIds = [...new Set(trees.map((t) => t.containerId).filter((id): id is string => id !== null))];
  const entries = cache?.entriesByContainer(containerIds);
  const open = findings?.openFindingsByContainer(containerIds);
  const runtimeStates = runtime?.sandboxes(containerIds);
  return {
    pod: { namespace, name, uid: uids.at(-1) ?? null, uids },
    calls: trees,
    sandboxes: groupBySandbox(trees, {
      ...(entries ? { cacheOf: (id: string) => (entries.get(id) ?? []).map((e) => presentCacheEntry(e)) } : {}),
      ...(open ? { findingsOf: (id: string) => (open.get(id) ?? []).map(presentFinding) } : {}),
      ...(runtimeStates ? { runtimeOf: (id: string) => { const s = runtimeStates.get(id); return s ? presentSandboxRuntime(s) : null; } } : {}),
    }),
    totals: totalsByCommand(trees),
    truncated: graph.truncated,
  };
}

/** Sandboxes in the order their first call started; trees keep their oldest-first order inside each. */
export function groupBySandbox(trees: readonly CallTree[], { cacheOf = () => [], findingsOf = () => [], runtimeOf = () => null }: SandboxExtras = {}): Sandbox[] {
  const groups = new Map<string | null, CallTree[]>();
  for (const t of trees) {
    const group = groups.get(t.containerId);
    if (group) group.push(t);
    else groups.set(t.containerId, [t]);
  }
  return [...groups].map(([containerId, calls]) => ({
    containerId,
    podUid: calls.find((c) => c.pod?.uid)?.pod?.uid ?? null,
    startedAt: calls[0]!.startedAt,
    calls,
    totals: totalsByCommand(calls),
    // Calls without a container id have no attachment libcni could cache, nor a finding about it.
    cache: containerId === null ? [] : cacheOf(containerId),
    findings: containerId === null ? [] : findingsOf(containerId),
    runtime: containerId === null ? null : runtimeOf(containerId),
  }));
}

/**
 * Milliseconds per command over top-level calls only (a delegated call's
 * time is already inside its parent's). Calls still running, or whose end
 * was not seen, have no duration and do not count.
 */
export function totalsByCommand(trees: readonly Pick<CallTree, 'command' | 'durationMs'>[]): Record<string, number> {
  const us = new Map<string, number>();
  for (const t of trees) {
    if (t.command === null || t.durationMs === null) continue;
    // Summed in whole µs, so 0.1 + 0.2 does not come out as 0.30000000000000004.
    us.set(t.command, (us.get(t.command) ?? 0) + Math.round(t.durationMs * 1000));
  }
  return Object.fromEntries([...us].map(([command, total]) => [command, msFromUs(total)]));
}
