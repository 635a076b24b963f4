/** The findings log's kinds and rows: what went wrong on the node, as the store keeps it. */

import { CACHE_PROBLEM_KINDS } from '../../collector/index.js';

/** The watcher's file problems, and what the store finds by comparing cache, IPs and calls. */
export const CACHE_FINDING_KINDS = [
  ...CACHE_PROBLEM_KINDS,
  /** A cache entry outlived a successful DEL of its container. */
  'stale-cache-entry',
  /** host-local holds an IP for a container with no live cache entry. */
  'leaked-ip',
  /** A successful top-level ADD after which no cache file appeared. */
  'add-without-cache',
  /** From the calls alone (store/findings/call-loops.ts): a container's DEL keeps failing and being retried. */
  'del-loop',
  /** From the calls alone: a pod's ADD keeps failing and being retried (stuck in ContainerCreating). */
  'add-loop',
  /** A network's ADDs started failing after one of its conf files changed (store/node-setup/config-failures.ts). */
  'config-changed-before-failures',
  /** A successful CNI GC left host-local reservations of attachments it was told are gone (store/node-setup/gc-check.ts). */
  'gc-leftover',
  /**
   * A network's CNI STATUS fails (store/network/heartbeat-sieve.ts), or the runtime itself says NetworkReady=false
   * (store/runtime/runtime-tracker.ts): runtimes report the node NotReady.
   */
  'network-not-ready',
  /** A network's STATUS went between ready and not ready more than a few times in 10 minutes. */
  'status-flapping',
  /**
   * What an ADD created in the kernel (links, iptables chains and rules, nftables tables and chains) that its DEL left and that still
   * exists, but for what is shared: bridges, and what a later ADD of another attachment reused
   * (store/findings/left-behind-rules.ts).
   */
  'left-behind',
  /**
   * An attachment (libcni's cache entry, host-local's reservations) whose sandbox the runtime no longer lists,
   * checked twice: a DEL that never ran (store/runtime/runtime-tracker.ts). Where the runtime can be asked, it
   * replaces the guess `leaked-ip`.
   */
  'leaked-attachment',
] as const;
export type CacheFindingKind = (typeof CACHE_FINDING_KINDS)[number];

/**
 * How bad a finding is, worst first: lists are ordered by it, so the real problem comes before the noise.
 * - critical: the runtime is stuck on it now (a loop: a pod that cannot start or cannot go; a network not ready: the node is NotReady).
 * - warning: something will break or is leaking (a cache file libcni cannot read, a stale entry, a held IP).
 * - info: worth knowing, often expected (an ADD run by hand leaves no cache file).
 */
export const FINDING_SEVERITIES = ['critical', 'warning', 'info'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** A broken cache file breaks the next DEL or CHECK of its attachment (containerd#8197: the DEL loops). */
const FILE_PROBLEM_SEVERITY = Object.fromEntries(CACHE_PROBLEM_KINDS.map((k) => [k, 'warning'])) as Record<(typeof CACHE_PROBLEM_KINDS)[number], FindingSeverity>;

/**
 * Every kind's severity, in one table: a new kind does not compile until it is given one here, and the
 * store's ordering (FINDING_SEVERITY_RANK_SQL), the API and the CLI follow from it.
 */
export const FINDING_SEVERITY: Readonly<Record<CacheFindingKind, FindingSeverity>> = {
  ...FILE_PROBLEM_SEVERITY,
  'del-loop': 'critical',
  'add-loop': 'critical',
  'stale-cache-entry': 'warning',
  'leaked-ip': 'warning',
  'add-without-cache': 'info',
  // New pods cannot start on that network while it holds; likely the cause, not proved.
  'config-changed-before-failures': 'warning',
  // Addresses leak until someone removes the files.
  'gc-leftover': 'warning',
  // The node is NotReady: no new pods are scheduled to it.
  'network-not-ready': 'critical',
  // The node flaps between Ready and NotReady, like a DEL loop it goes on by itself.
  'status-flapping': 'critical',
  'left-behind': 'warning',
  // Addresses leak until the range is exhausted and every new pod fails; `cnirec gc --apply` frees them.
  'leaked-attachment': 'warning',
};

/** 0 for critical, 1 for warning…: the sort key. */
export const severityRankOf = (s: FindingSeverity): number => FINDING_SEVERITIES.indexOf(s);

/** The kinds of a severity, for filters. */
export const kindsOfSeverity = (s: FindingSeverity): CacheFindingKind[] => CACHE_FINDING_KINDS.filter((k) => FINDING_SEVERITY[k] === s);

export interface StoredFinding {
  readonly id: number;
  readonly kind: CacheFindingKind;
  /** What it is about (a path, a call id, a container and interface, a pod): one open finding per kind and subject. */
  readonly subject: string;
  readonly message: string;
  readonly path: string | null;
  readonly containerId: string | null;
  readonly network: string | null;
  readonly ip: string | null;
  readonly callId: string | null;
  readonly podNamespace: string | null;
  readonly podName: string | null;
  /** How many times it happened, where that means something (a loop's failures); null otherwise. */
  readonly count: number | null;
  readonly firstSeenMs: number;
  readonly lastSeenMs: number;
  readonly resolvedAtMs: number | null;
}

export interface FindingFilter {
  /** Also findings that were resolved (default: open ones only). */
  readonly includeResolved?: boolean;
  readonly kind?: CacheFindingKind;
  readonly limit?: number;
}

/**
 * One finding as people look at it: a kind and subject over time. A condition that ended and came back is
 * one group with several occurrences; its fields are those of its latest occurrence.
 */
export interface StoredFindingGroup extends StoredFinding {
  readonly severity: FindingSeverity;
  /** Times the condition was found anew (rows in the log for this kind and subject). */
  readonly occurrences: number;
  /** When it was first found, over all occurrences (the latest occurrence's own is `firstSeenMs` of its row). */
  readonly groupFirstSeenMs: number;
}

export interface FindingGroupQuery {
  /** Any of these kinds; all when absent or empty. */
  readonly kinds?: readonly CacheFindingKind[];
  readonly pod?: { readonly namespace: string; readonly name: string };
  readonly containerId?: string;
  /** Also groups whose latest occurrence is resolved (default: open ones only). */
  readonly includeResolved?: boolean;
  readonly limit: number;
  /** nextCursor of the previous page. */
  readonly cursor?: string | null;
}

export interface FindingGroupPage {
  /** Worst severity first, then most recently seen. */
  readonly items: StoredFindingGroup[];
  /** Groups matching the query over all pages. */
  readonly total: number;
  /** Groups matching the query by kind (kinds with none absent). */
  readonly byKind: Partial<Record<CacheFindingKind, number>>;
  readonly nextCursor: string | null;
}
