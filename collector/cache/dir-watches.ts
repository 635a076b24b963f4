/**
 * The file-system watches of the cache watcher (and of the CNI conf dir
 * watcher, node-setup/conf-watcher.ts): one fs.watch per directory, and the
 * events they report turned into targets to look at. fs.watch reports one
 * write as several events, so targets are collected for a short settle time
 * and handed over together, each once. A watch that breaks (its directory
 * removed) is simply dropped: the periodic rescan notices and watches again.
 */

import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** What a changed name in a watched directory stands for. */
export type Target =
  | { readonly role: 'result'; readonly dir: string; readonly path: string }
  | { readonly role: 'ip'; readonly dir: string; readonly network: string; readonly path: string }
  | { readonly role: 'network'; readonly dir: string; readonly network: string };

export interface DirWatchOptions<T = Target> {
  readonly logger: Logger;
  readonly settleMs: number;
  /** Targets that changed, once each, after the settle time. */
  onChanged(targets: T[]): void;
  /** The kernel dropped events (no name given): only a full rescan can tell what changed. */
  onOverflow(): void;
  /** What identifies a target (a path): one look per key per settle time; null: not worth a look. Default: the cache's targets. */
  keyOf?(target: T): string | null;
}

export interface DirWatches<T = Target> {
  /** Watches `dir` unless it is already watched; `target` says what a name in it stands for. */
  ensure(dir: string, target: (name: string) => T): void;
  close(dir: string): void;
  /** Closes the watches of the directories below `dir` for which `keep` says no. */
  closeBelow(dir: string, keep?: (watched: string) => boolean): void;
  closeAll(): void;
  readonly size: number;
}

/** The cache's targets: hidden names are other tools' temp files mid-write; the rename into place is what counts. */
function cacheTargetKey(t: Target): string | null {
  if (t.role === 'network') return join(t.dir, t.network);
  return t.path.slice(t.path.lastIndexOf('/') + 1).startsWith('.') ? null : t.path;
}

export function createDirWatches<T = Target>(opts: DirWatchOptions<T>): DirWatches<T> {
  const watchers = new Map<string, FSWatcher>();
  const dirty = new Map<string, T>();
  let settleTimer: NodeJS.Timeout | null = null;
  const keyOf = opts.keyOf ?? (cacheTargetKey as unknown as (t: T) => string | null);

  const markDirty = (t: T) => {
    const key = keyOf(t);
    if (key === null) return;
    dirty.set(key, t);
    settleTimer ??= setTimeout(() => {
      settleTimer = null;
      const targets = [...dirty.values()];
      dirty.clear();
      opts.onChanged(targets);
    }, opts.settleMs);
  };

  const close = (dir: string) => {
    watchers.get(dir)?.close();
    watchers.delete(dir);
  };

  return {
    ensure(dir, target) {
      if (watchers.has(dir)) return;
      try {
        const w = watch(dir, { persistent: false }, (_event, name) => {
          if (name === null) opts.onOverflow();
          else markDirty(target(name.toString()));
        });
        w.on('error', () => close(dir));
        watchers.set(dir, w);
      } catch (err) {
        opts.logger.warn({ dir, err: (err as Error).message }, 'cannot watch directory; relying on the periodic rescan');
      }
    },
    close,
    closeBelow(dir, keep = () => false) {
      for (const w of [...watchers.keys()]) if (w.startsWith(`${dir}/`) && !keep(w)) close(w);
    },
    closeAll() {
      if (settleTimer) clearTimeout(settleTimer);
      settleTimer = null;
      dirty.clear();
      for (const dir of [...watchers.keys()]) close(dir);
    },
    get size() {
      return watchers.size;
    },
  };
}
