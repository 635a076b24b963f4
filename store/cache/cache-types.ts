/**
 * What the store hands out about libcni's caches: entry versions, IP
 * history and findings. Flat camelCase mirrors of the rows, times in
 * milliseconds since the Unix epoch.
 */

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

