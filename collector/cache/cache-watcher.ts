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
 *
 * This file keeps the state and the queue; one file is looked at in
 * observe-file.ts, directories are scanned in dir-scan.ts and watched in
 * dir-watches.ts, and what a look means is decided in cache-diff.ts.
 */

import type { Logger } from 'pino';
import { createBatchTopic, createSerialSteps, isoFromMs } from '../../lib/index.js';
import { diffObservation, type Known, type Observation } from './cache-diff.js';
import type { CacheEntry, CacheEvent, CacheListener } from './cache-types.js';
import { createDirScanner } from './dir-scan.js';
import { createDirWatches } from './dir-watches.js';

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
  /** Live cache files and host-local reservations the watcher knows. */
  readonly entries: number;
  readonly allocations: number;
  /** Files and directories it cannot use now (empty, corrupt, too large, unreadable…). */
  readonly problems: number;
  /** When the last full scan finished (ISO 8601); null before the first. */
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

export function createCacheWatcher(opts: CacheWatcherOptions): CacheWatcher {
  const log = opts.logger;
  const events = createBatchTopic<CacheEvent, CacheListener>(
    (l, batch) => l.onCacheEvents(batch),
    (err) => log.error({ err }, 'a cache subscriber failed; its events are dropped'),
  );
  const known = new Map<string, Known>();
  let running = false;
  let rescanTimer: NodeJS.Timeout | null = null;
  let fullScanQueued = false;
  let lastScanAt: number | null = null;
  let lastError: string | null = null;

  // One step at a time; what a step found is published after it, failed or not.
  const steps = createSerialSteps((err, what) => {
    lastError = `${what}: ${err instanceof Error ? err.message : String(err)}`;
    log.error({ err: lastError }, 'cache watcher step failed; the next rescan retries');
  }, events.flush);

  const apply = (path: string, observed: Observation) => {
    const now = observed.kind === 'entry' && opts.redact ? { ...observed, entry: opts.redact(observed.entry) } : observed;
    const { events: found, next } = diffObservation(known.get(path), now, Date.now());
    if (next) known.set(path, next);
    else known.delete(path);
    for (const ev of found) events.add(ev);
  };

  const requestFullScan = () => {
    if (fullScanQueued || !running) return;
    fullScanQueued = true;
    void steps.run('rescan', async () => {
      fullScanQueued = false;
      await fullScan();
    });
  };

  const watches = createDirWatches({
    logger: log,
    settleMs: opts.settleMs ?? 15,
    onChanged: (targets) =>
      void steps.run('following changes', async () => {
        for (const t of targets) await scanner.lookAt(t);
      }),
    onOverflow: requestFullScan,
  });
  const scanner = createDirScanner({ resultDirs: opts.resultDirs, ipamDirs: opts.ipamDirs, known, apply, watches, canWatch: () => running });

  const fullScan = async (): Promise<string[]> => {
    const complete = await scanner.fullScan();
    lastScanAt = Date.now();
    return complete;
  };

  return {
    subscribe: (listener) => events.subscribe(listener),
    async start() {
      running = true;
      await steps.run('startup scan', async () => {
        const dirs = await fullScan();
        const livePaths = [...known].filter(([, k]) => k.kind !== 'problem').map(([p]) => p);
        events.add({ type: 'cache.reconciled', atMs: Date.now(), dirs, livePaths, watchingResults: opts.resultDirs.length > 0 });
        log.info({ entries: livePaths.length, dirs }, 'cache directories read');
      });
      rescanTimer = setInterval(requestFullScan, opts.rescanIntervalMs ?? 5000);
      rescanTimer.unref();
    },
    async stop() {
      running = false;
      if (rescanTimer) clearInterval(rescanTimer);
      rescanTimer = null;
      watches.closeAll();
      await steps.idle();
    },
    rescan: () => steps.run('rescan', async () => void (await fullScan())),
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
        watchedDirs: watches.size,
        entries,
        allocations,
        problems,
        lastScanAt: lastScanAt === null ? null : isoFromMs(lastScanAt),
        lastError,
      };
    },
  };
}
