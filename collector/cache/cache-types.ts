/**
 * What the cache watcher publishes: libcni's cached results (what the node
 * believes is attached) and host-local's IP reservations, as they appear,
 * change and disappear. Times are milliseconds since the Unix epoch (file
 * mtimes have no finer meaning here).
 */

import type { PodRef } from '../types.js';

/** One libcni cache file, decoded. */
export interface CacheEntry {
  /** Absolute path of the file. */
  readonly path: string;
  /** The watched directory it was found in (results or multus results). */
  readonly dir: string;
  /**
   * `cniCacheV1`, or `legacy` for files that hold only a raw result JSON
   * (libcni before 0.8): those know neither container, network nor ifname.
   */
  readonly format: 'cniCacheV1' | 'legacy';
  readonly containerId: string | null;
  readonly networkName: string | null;
  readonly ifName: string | null;
  readonly netns: string | null;
  /** [key, value] pairs as libcni stored them. */
  readonly cniArgs: readonly (readonly [string, string])[];
  readonly capabilityArgs: Readonly<Record<string, unknown>> | null;
  /** The conf/conflist bytes, base64-decoded and parsed; null when not valid JSON. */
  readonly config: unknown;
  /** Why `config` is null although the file had one. */
  readonly configProblem: string | null;
  readonly result: unknown;
  /** IP addresses (without prefix length) from the result's `ips`. */
  readonly ips: readonly string[];
  readonly pod: PodRef | null;
  /** A hash of the file's bytes: a rewrite with the same bytes is not a change. */
  readonly digest: string;
  /** The file's mtime: when libcni wrote it, also for files found at startup. Set by the watcher. */
  readonly mtimeMs: number;
  /**
   * JSON pointers (from the entry: `/config/…`, `/result/…`, `/capabilityArgs/…`)
   * of secret values replaced by a marker before publishing; absent when none were.
   */
  readonly redactions?: readonly string[];
}

/** One host-local reservation file `<dataDir>/<network>/<ip>`. */
export interface IpAllocation {
  readonly path: string;
  readonly dir: string;
  readonly network: string;
  readonly ip: string;
  /** Null when the file was empty (host-local never writes that, but a crash may leave it). */
  readonly containerId: string | null;
  /** Older host-local files hold only the container id. */
  readonly ifName: string | null;
  /** When host-local reserved it (the file's mtime). */
  readonly mtimeMs: number;
}

/** What can be wrong with a file or directory itself; the store and the API take their lists from here. */
export const CACHE_PROBLEM_KINDS = ['empty-file', 'corrupt-json', 'wrong-shape', 'too-large', 'unreadable', 'not-a-regular-file', 'directory-unreadable'] as const;
export type CacheProblemKind = (typeof CACHE_PROBLEM_KINDS)[number];

/** A file (or directory) the watcher could not make sense of. */
export interface CacheProblem {
  readonly kind: CacheProblemKind;
  readonly path: string;
  readonly dir: string;
  /** What is wrong and what it means, for a person. */
  readonly message: string;
}

/** Cache files above this are refused unread: libcni's own are a few KiB. */
export const MAX_CACHE_FILE_BYTES = 1024 * 1024;

export type CacheEvent =
  | { readonly type: 'cache.added'; readonly entry: CacheEntry; readonly atMs: number }
  | { readonly type: 'cache.changed'; readonly entry: CacheEntry; readonly atMs: number }
  | { readonly type: 'cache.removed'; readonly path: string; readonly dir: string; readonly atMs: number }
  | { readonly type: 'ip.allocated'; readonly allocation: IpAllocation; readonly atMs: number }
  | { readonly type: 'ip.released'; readonly path: string; readonly dir: string; readonly atMs: number }
  | { readonly type: 'cache.problem'; readonly problem: CacheProblem; readonly atMs: number }
  /** A path that had a problem is now fine or gone. */
  | { readonly type: 'cache.problem-cleared'; readonly path: string; readonly atMs: number }
  /** The startup scan is complete: everything not announced since then is gone. */
  | {
      readonly type: 'cache.reconciled';
      readonly atMs: number;
      /** Directories read completely: anything recorded under them and not in `livePaths` is gone. */
      readonly dirs: readonly string[];
      readonly livePaths: readonly string[];
      /** At least one libcni result directory is watched (host-local alone cannot tell a leak). */
      readonly watchingResults: boolean;
    };

/** The port through which the store receives cache events (like CallListener for calls). */
export interface CacheListener {
  onCacheEvents(events: readonly CacheEvent[]): void;
}
