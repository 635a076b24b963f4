/**
 * What the store hands out about libcni's caches: entry versions, IP
 * history and findings. Flat camelCase mirrors of the rows, times in
 * milliseconds since the Unix epoch.
 */

import { CACHE_PROBLEM_KINDS } from '../../collector/cache/cache-types.js';
import type { CacheEntryFields } from './cache-entry-fields.js';

/** The parsed file's fields (see cache-entry-fields.ts), and the stored times and links, which are the store's own. */
export interface StoredCacheEntry extends CacheEntryFields {
  readonly id: number;
  /** As libcni stored it (an object), or null. */
  readonly capabilityArgs: unknown;
  /** The file's mtime: when libcni wrote it. */
  readonly fileMtimeMs: number;
  readonly firstSeenMs: number;
  readonly lastSeenMs: number;
  /** A newer version of the same file replaced this one. */
  readonly supersededAtMs: number | null;
  /** The file was deleted (libcni does on DEL). */
  readonly removedAtMs: number | null;
  /** The ADD that wrote it (last top-level plugin call of the chain), when recorded. */
  readonly addCallId: string | null;
  readonly delCallId: string | null;
  /** JSON pointers (`/config/…`, `/result/…`) of values replaced by a marker before storing; empty when none. */
  readonly redactions: readonly string[];
}

export interface CacheEntryFilter {
  readonly containerId?: string;
  readonly network?: string;
  readonly podNamespace?: string;
  readonly podName?: string;
  /** Also versions that were superseded or removed (default: live entries only). */
  readonly includeRemoved?: boolean;
  readonly limit?: number;
}

export interface StoredIpHolding {
  readonly ip: string;
  readonly network: string | null;
  readonly containerId: string | null;
  readonly ifName: string | null;
  readonly podNamespace: string | null;
  readonly podName: string | null;
  readonly source: 'host-local' | 'cache';
  readonly path: string;
  readonly fromMs: number;
  /** Null while held. */
  readonly toMs: number | null;
}

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
