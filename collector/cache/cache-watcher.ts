/**
 * Follows libcni's result caches and host-local's reservation directories:
 * reads everything at start (so what changed while the daemon was down is
 * reconciled), then follows creates, rewrites and deletes with fs.watch, and
 * rescans every few seconds anyway: inotify drops events when its queue
 * overflows, misses directories created after the watch, and a rename over a
 * file shows up under the new name only. The rescan is cheap (an lstat per
 * file, a read only when inode, size or times changed).
 *
 * Every look at the disk runs in one queue, so events for a path are
 * published in the order the disk went through them. Nothing here throws at
 * its subscribers: files it cannot use become `cache.problem` events.
 */

import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { diffObservation, type Known, type Observation } from './cache-diff.js';
import { MAX_CACHE_FILE_BYTES, type CacheEntry, type CacheEvent, type CacheListener, type CacheProblem } from './cache-types.js';
import { parseCacheFile } from './parse-cache-file.js';
import { isReservationFileName, parseReservation } from './parse-host-local.js';
import { readBounded, statKey } from './read-bounded.js';

export const DEFAULT_RESULT_DIRS = ['/var/lib/cni/results', '/var/lib/cni/multus/results'] as const;
export const DEFAULT_IPAM_DIRS = ['/var/lib/cni/networks'] as const;

/** host-local writes an id and an interface name: anything much bigger is not its file. */
const MAX_RESERVATION_BYTES = 4096;

export interface CacheWatcherOptions {
  /** libcni result cache directories (`<cacheDir>/results`, multus's). */
  readonly resultDirs: readonly string[];
  /** host-local data directories (`<dataDir>` holding `<network>/<ip>` files). */
  readonly ipamDirs: readonly string[];
  readonly logger: Logger;
  /** The safety-net full rescan. */
  readonly rescanIntervalMs?: number;
  /** fs.watch reports a write as several events: wait this long and look once. */
  readonly settleMs?: number;
  /** Replaces secrets in an entry as soon as it is decoded, so nothing downstream (or kept here) holds them. */
  readonly redact?: (entry: CacheEntry) => CacheEntry;
}

export interface CacheWatcherStatus {
  readonly running: boolean;
  readonly resultDirs: readonly string[];
  readonly ipamDirs: readonly string[];
  /** Directories under a file-system watch now (host-local's network directories count; missing ones do not). */
  readonly watchedDirs: number;
  readonly entries: number;
  readonly allocations: number;
  readonly problems: number;
  readonly lastScanAt: string | null;
  readonly lastError: string | null;
}

export interface CacheWatcher {
  subscribe(listener: CacheListener): () => void;
  /** Reads every watched directory, publishes what it found and `cache.reconciled`, then follows changes. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Runs a full rescan now (tests, and the periodic safety net). */
  rescan(): Promise<void>;
  status(): CacheWatcherStatus;
}

type Target =
  | { readonly role: 'result'; readonly dir: string; readonly path: string }
  | { readonly role: 'ip'; readonly dir: string; readonly network: string; readonly path: string }
  | { readonly role: 'network'; readonly dir: string; readonly network: string };

export function createCacheWatcher(opts: CacheWatcherOptions): CacheWatcher {
  const log = opts.logger;
  const listeners = new Set<CacheListener>();
  const known = new Map<string, Known>();
  const watchers = new Map<string, FSWatcher>();
  const dirty = new Map<string, Target>();
  let pending: CacheEvent[] = [];
  let queue: Promise<void> = Promise.resolve();
  let running = false;
  let settleTimer: NodeJS.Timeout | null = null;
  let rescanTimer: NodeJS.Timeout | null = null;
  let fullScanQueued = false;
  let lastScanAt: number | null = null;
  let lastError: string | null = null;

  const publish = () => {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    for (const l of listeners) {
      try {
        l.onCacheEvents(batch);
      } catch (err) {
        log.error({ err }, 'a cache subscriber failed; its events are dropped');
      }
    }
  };

  /** Runs `task` after every earlier one; a failure is logged, never propagated (the watcher must not stall). */
  const enqueue = (what: string, task: () => Promise<void>): Promise<void> => {
    queue = queue
      .then(task)
      .catch((err: unknown) => {
        lastError = `${what}: ${err instanceof Error ? err.message : String(err)}`;
        log.error({ err: lastError }, 'cache watcher step failed; the next rescan retries');
      })
      .finally(publish);
    return queue;
  };

  const apply = (path: string, now: Observation) => {
    const { events, next } = diffObservation(known.get(path), now, Date.now());
    if (next) known.set(path, next);
    else known.delete(path);
    pending.push(...events);
  };

  const problemObs = (kind: CacheProblem['kind'], path: string, dir: string, message: string, key: string | null): Observation => ({
    kind: 'problem',
    key,
    problem: { kind, path, dir, message },
  });

  // ---- one file ----

  const lookAtResult = async (dir: string, path: string) => {
    const st = await lstatOrNull(path);
    if (!st) return apply(path, { kind: 'gone', path, dir });
    if (st.isDirectory()) return; // libcni never nests; not ours to judge
    const key = statKey(st);
    if (known.get(path)?.key === key) return;
    const r = await readBounded(path, MAX_CACHE_FILE_BYTES);
    switch (r.kind) {
      case 'gone':
        return apply(path, { kind: 'gone', path, dir });
      case 'not-a-regular-file':
        return apply(path, problemObs('not-a-regular-file', path, dir, `${path} in the CNI cache directory was not read: ${r.why}`, key));
      case 'unreadable':
        return apply(path, problemObs('unreadable', path, dir, `cannot read cache file ${path}: ${r.why}; cnirec needs read access to ${dir} (run as root)`, key));
      case 'too-large':
        return apply(
          path,
          problemObs('too-large', path, dir, `cache file ${path} is ${r.size} bytes (limit ${MAX_CACHE_FILE_BYTES}); libcni writes a few KiB, so it is damaged or not a CNI cache file: it was not read`, r.key),
        );
      case 'bytes': {
        const parsed = parseCacheFile(r.bytes, path, dir, r.mtimeMs);
        if (!parsed.ok) return apply(path, { kind: 'problem', key: r.key, problem: parsed.problem });
        return apply(path, { kind: 'entry', key: r.key, entry: opts.redact ? opts.redact(parsed.entry) : parsed.entry });
      }
    }
  };

  const lookAtReservation = async (dir: string, network: string, path: string) => {
    const ip = path.slice(path.lastIndexOf('/') + 1);
    if (!isReservationFileName(ip)) return; // lock, last_reserved_ip.<range>: host-local's bookkeeping
    const st = await lstatOrNull(path);
    if (!st) return apply(path, { kind: 'gone', path, dir });
    const key = statKey(st);
    if (known.get(path)?.key === key) return;
    const r = await readBounded(path, MAX_RESERVATION_BYTES);
    switch (r.kind) {
      case 'gone':
        return apply(path, { kind: 'gone', path, dir });
      case 'not-a-regular-file':
        return apply(path, problemObs('not-a-regular-file', path, dir, `${path} in the host-local data directory was not read: ${r.why}`, key));
      case 'unreadable':
        return apply(path, problemObs('unreadable', path, dir, `cannot read host-local reservation ${path}: ${r.why}`, key));
      case 'too-large':
        return apply(path, problemObs('too-large', path, dir, `host-local reservation ${path} is ${r.size} bytes; host-local writes an id and an interface name, so it was not read`, r.key));
      case 'bytes':
        return apply(path, { kind: 'ip', key: r.key, allocation: parseReservation(r.bytes.toString('utf8'), { path, dir, network, ip, mtimeMs: r.mtimeMs }) });
    }
  };

  // ---- directories ----

  /** Lists `dir`; null when it is missing (nothing there), a problem when it cannot be read. */
  const list = async (dir: string, parentDir: string): Promise<{ names: string[]; subdirs: string[] } | null | 'unreadable'> => {
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      if (known.get(dir)?.kind === 'problem') apply(dir, { kind: 'gone', path: dir, dir: parentDir });
      // Hidden names are other tools' temp files mid-write; the rename into place is what counts.
      const visible = entries.filter((e) => !e.name.startsWith('.'));
      return { names: visible.filter((e) => !e.isDirectory()).map((e) => e.name), subdirs: visible.filter((e) => e.isDirectory()).map((e) => e.name) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (known.get(dir)?.kind === 'problem') apply(dir, { kind: 'gone', path: dir, dir: parentDir });
        return null;
      }
      apply(dir, problemObs('directory-unreadable', dir, parentDir, `cannot list ${dir}: ${(err as Error).message}; its files are not followed until it can be read`, null));
      return 'unreadable';
    }
  };

  /** Forgets (as gone) every known path under `prefix` that `seen` lacks. */
  const sweep = (dir: string, prefix: string, seen: Set<string>) => {
    for (const [path, k] of [...known]) {
      const kDir = k.kind === 'entry' ? k.entry.dir : k.kind === 'ip' ? k.allocation.dir : k.problem.dir;
      if (kDir === dir && path.startsWith(prefix) && path !== dir && !seen.has(path)) apply(path, { kind: 'gone', path, dir });
    }
  };

  const scanResultsDir = async (dir: string): Promise<boolean> => {
    const listing = await list(dir, dir);
    if (listing === 'unreadable') return false;
    if (listing === null) {
      closeWatch(dir);
      sweep(dir, `${dir}/`, new Set());
      return true;
    }
    ensureWatch(dir, (name) => ({ role: 'result', dir, path: join(dir, name) }));
    const seen = new Set(listing.names.map((name) => join(dir, name)));
    await forEachLimited([...seen], (path) => lookAtResult(dir, path));
    sweep(dir, `${dir}/`, seen);
    return true;
  };

  const scanNetworkDir = async (dir: string, network: string): Promise<boolean> => {
    const netDir = join(dir, network);
    const listing = await list(netDir, dir);
    if (listing === 'unreadable') return false;
    const seen = new Set<string>();
    if (listing === null) {
      closeWatch(netDir);
    } else {
      ensureWatch(netDir, (name) => ({ role: 'ip', dir, network, path: join(netDir, name) }));
      for (const name of listing.names) seen.add(join(netDir, name));
      await forEachLimited([...seen], (path) => lookAtReservation(dir, network, path));
    }
    sweep(dir, `${netDir}/`, seen);
    return true;
  };

  const scanIpamDir = async (dir: string): Promise<boolean> => {
    const listing = await list(dir, dir);
    if (listing === 'unreadable') return false;
    if (listing === null) {
      closeWatch(dir);
      for (const w of [...watchers.keys()]) if (w.startsWith(`${dir}/`)) closeWatch(w);
      sweep(dir, `${dir}/`, new Set());
      return true;
    }
    ensureWatch(dir, (name) => ({ role: 'network', dir, network: name }));
    let complete = true;
    // Network directories that are symlinks are not followed (readdir reports them as links, not dirs).
    for (const network of listing.subdirs) complete = (await scanNetworkDir(dir, network)) && complete;
    const networks = new Set(listing.subdirs.map((n) => join(dir, n)));
    for (const [path, k] of [...known]) {
      if (k.kind !== 'ip' || k.allocation.dir !== dir) continue;
      if (!networks.has(join(dir, k.allocation.network))) apply(path, { kind: 'gone', path, dir });
    }
    for (const w of [...watchers.keys()]) if (w.startsWith(`${dir}/`) && !networks.has(w)) closeWatch(w);
    return complete;
  };

  const fullScan = async (): Promise<string[]> => {
    const complete: string[] = [];
    for (const dir of opts.resultDirs) if (await scanResultsDir(dir)) complete.push(dir);
    for (const dir of opts.ipamDirs) if (await scanIpamDir(dir)) complete.push(dir);
    lastScanAt = Date.now();
    return complete;
  };

  // ---- fs.watch ----

  const ensureWatch = (dir: string, target: (name: string) => Target) => {
    if (!running || watchers.has(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null) requestFullScan();
        else markDirty(target(name.toString()));
      });
      // The directory was removed or the watch broke: the rescan notices and watches again.
      w.on('error', () => closeWatch(dir));
      watchers.set(dir, w);
    } catch (err) {
      log.warn({ dir, err: (err as Error).message }, 'cannot watch directory; relying on the periodic rescan');
    }
  };

  const closeWatch = (dir: string) => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };

  const markDirty = (t: Target) => {
    if (t.role !== 'network' && t.path.slice(t.path.lastIndexOf('/') + 1).startsWith('.')) return;
    dirty.set(t.role === 'network' ? join(t.dir, t.network) : t.path, t);
    settleTimer ??= setTimeout(() => {
      settleTimer = null;
      void enqueue('following changes', drainDirty);
    }, opts.settleMs ?? 15);
  };

  const drainDirty = async () => {
    const targets = [...dirty.values()];
    dirty.clear();
    for (const t of targets) {
      if (t.role === 'result') await lookAtResult(t.dir, t.path);
      else if (t.role === 'ip') await lookAtReservation(t.dir, t.network, t.path);
      else await scanNetworkDir(t.dir, t.network);
    }
  };

  const requestFullScan = () => {
    if (fullScanQueued || !running) return;
    fullScanQueued = true;
    void enqueue('rescan', async () => {
      fullScanQueued = false;
      await fullScan();
    });
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async start() {
      running = true;
      await enqueue('startup scan', async () => {
        const dirs = await fullScan();
        const livePaths = [...known].filter(([, k]) => k.kind !== 'problem').map(([p]) => p);
        pending.push({ type: 'cache.reconciled', atMs: Date.now(), dirs, livePaths, watchingResults: opts.resultDirs.length > 0 });
        log.info({ entries: livePaths.length, dirs }, 'cache directories read');
      });
      rescanTimer = setInterval(requestFullScan, opts.rescanIntervalMs ?? 5000);
      rescanTimer.unref();
    },
    async stop() {
      running = false;
      if (rescanTimer) clearInterval(rescanTimer);
      if (settleTimer) clearTimeout(settleTimer);
      rescanTimer = settleTimer = null;
      for (const dir of [...watchers.keys()]) closeWatch(dir);
      await queue;
    },
    rescan: () => enqueue('rescan', async () => void (await fullScan())),
    status() {
      let entries = 0;
      let allocations = 0;
      let problems = 0;
      for (const k of known.values()) {
        if (k.kind === 'entry') entries++;
        else if (k.kind === 'ip') allocations++;
        else problems++;
      }
      return {
        running,
        resultDirs: opts.resultDirs,
        ipamDirs: opts.ipamDirs,
        watchedDirs: watchers.size,
        entries,
        allocations,
        problems,
        lastScanAt: lastScanAt === null ? null : new Date(lastScanAt).toISOString(),
        lastError,
      };
    },
  };
}

/** Files are independent: a few reads in flight at once keep libuv's thread pool busy (10,000 files in well under 3 s). */
async function forEachLimited<T>(items: readonly T[], fn: (item: T) => Promise<void>, limit = 32): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch {
    // Gone (or its directory is): the caller reports it as removed; a directory it cannot read is reported by the listing.
    return null;
  }
}
