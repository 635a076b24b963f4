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
] as const;
export type CacheFindingKind = (typeof CACHE_FINDING_KINDS)[number];

export interface StoredFinding {
  readonly id: number;
  readonly kind: CacheFindingKind;
  readonly message: string;
  readonly path: string | null;
  readonly containerId: string | null;
  readonly network: string | null;
  readonly ip: string | null;
  readonly callId: string | null;
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
