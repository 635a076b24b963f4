/**
 * Follows the CNI conf dirs and publishes every version of every conf file
 * (`.conf`, `.conflist`, `.json`: what any runtime would read; lock files,
 * backups and editors' temp files are not followed):
 * reads them all at start, then follows creates, rewrites, renames and
 * deletes with the cache watcher's machinery (fs.watch through dir-watches,
 * settled), and rescans every few seconds anyway, as inotify can drop
 * events. Links are not followed, FIFOs never block and big files are not
 * read (read-dirs.ts). Every look runs in one queue, so a file's versions
 * are published in the order the disk went through them.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createBatchTopic, createSerialSteps } from '../../lib/index.js';
import { createDirWatches, lstatOrNull, statKey } from '../cache/index.js';
import { confKindOf } from './conf-file.js';
import { confFileVersion, sameVersion, type ConfFileVersion, type ConfRedact } from './conf-version.js';
import { readConfFile } from './read-dirs.js';

export type ConfEvent =
  | { readonly type: 'conf.version'; readonly version: ConfFileVersion; readonly previous: ConfFileVersion | null; readonly atMs: number }
  | { readonly type: 'conf.removed'; readonly path: string; readonly dir: string; readonly atMs: number }
  /** The startup scan is done: `livePaths` is everything under `dirs`; anything else recorded there is gone. */
  | { readonly type: 'conf.reconciled'; readonly dirs: readonly string[]; readonly livePaths: readonly string[]; readonly atMs: number };

export interface ConfListener {
  onConfEvents(events: readonly ConfEvent[]): void;
}

export interface ConfWatcherOptions {
  readonly dirs: readonly string[];
  readonly logger: Logger;
  readonly rescanIntervalMs?: number;
  readonly settleMs?: number;
  readonly redact?: ConfRedact;
}

export interface ConfWatcher {
  subscribe(listener: ConfListener): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
  rescan(): Promise<void>;
  /** Forgets what is known of `path`, so the next look publishes it again (a write that failed downstream). */
  forget(path: string): void;
  readonly dirs: readonly string[];
}

interface Known {
  readonly key: string;
  readonly version: ConfFileVersion;
}

export function createConfWatcher(opts: ConfWatcherOptions): ConfWatcher {
  const log = opts.logger;
  const events = createBatchTopic<ConfEvent, ConfListener>(
    (l, batch) => l.onConfEvents(batch),
    (err) => log.error({ err }, 'a conf dir subscriber failed; its events are dropped'),
  );
  const known = new Map<string, Known>();
  let running = false;
  let timer: NodeJS.Timeout | null = null;

  // One step at a time; what a step found is published after it, failed or not.
  const steps = createSerialSteps(
    (err, what) => log.error({ err: err instanceof Error ? err.message : String(err) }, `conf dir watcher: ${what} failed; the next rescan retries`),
    events.flush,
  );

  const lookAt = (dir: string, path: string) => {
    if (confKindOf(path.slice(path.lastIndexOf('/') + 1)) === null) return;
    const st = lstatOrNull(path);
    const was = known.get(path);
    if (!st) {
      if (was) {
        known.delete(path);
        events.add({ type: 'conf.removed', path, dir, atMs: Date.now() });
      }
      return;
    }
    const key = statKey(st);
    if (was?.key === key) return;
    const file = readConfFile(path, path.slice(path.lastIndexOf('/') + 1));
    // Gone between the lstat and the read: the next event or rescan says so.
    if (!file || file.kind === 'directory') return;
    const version = confFileVersion(dir, file, opts.redact);
    known.set(path, { key, version });
    if (was && sameVersion(was.version, version)) return;
    events.add({ type: 'conf.version', version, previous: was?.version ?? null, atMs: Date.now() });
  };

  const scanDir = (dir: string): boolean => {
    let names: string[];
    let missing = false;
    try {
      names = readdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        log.warn({ dir, err: (err as Error).message }, 'cannot list a CNI conf dir; its files are not followed until it can be read');
        return false;
      }
      names = [];
      missing = true;
    }
    if (running && !missing) watches.ensure(dir, (name) => ({ dir, path: join(dir, name) }));
    if (missing) watches.close(dir);
    const seen = new Set(names.map((n) => join(dir, n)));
    for (const path of seen) lookAt(dir, path);
    for (const path of [...known.keys()]) if (path.startsWith(`${dir}/`) && !seen.has(path)) lookAt(dir, path);
    return true;
  };
  const fullScan = (): string[] => opts.dirs.filter((d) => scanDir(d));

  const watches = createDirWatches<{ dir: string; path: string }>({
    logger: log,
    settleMs: opts.settleMs ?? 15,
    keyOf: (t) => t.path,
    onChanged: (targets) => void steps.run('following changes', () => targets.forEach((t) => lookAt(t.dir, t.path))),
    onOverflow: () => void steps.run('rescan', () => void fullScan()),
  });

  return {
    dirs: opts.dirs,
    subscribe: (listener) => events.subscribe(listener),
    async start() {
      running = true;
      await steps.run('startup scan', () => {
        const dirs = fullScan();
        const livePaths = [...known.keys()].filter((p) => dirs.some((d) => p.startsWith(`${d}/`)));
        events.add({ type: 'conf.reconciled', dirs, livePaths, atMs: Date.now() });
        log.info({ dirs: opts.dirs, files: known.size }, 'CNI conf dirs read');
      });
      timer = setInterval(() => void steps.run('rescan', () => void fullScan()), opts.rescanIntervalMs ?? 5000);
      timer.unref();
    },
    async stop() {
      running = false;
      if (timer) clearInterval(timer);
      timer = null;
      watches.closeAll();
      await steps.idle();
    },
    rescan: () => steps.run('rescan', () => void fullScan()),
    forget: (path) => void known.delete(path),
  };
}
