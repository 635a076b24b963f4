/**
 * The file-system watches of the cache watcher: one fs.watch per directory,
 * and the events they report turned into targets to look at. fs.watch
 * reports one write as several events, so targets are collected for a
 * short settle time and handed over together, each once. A watch that
 * breaks (its directory removed) is simply dropped: the periodic rescan
 * notices and watches again.
 */

import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** What a changed name in a watched directory stands for. */
export type Target =
  | { readonly role: 'result'; readonly dir: string; readonly path: string }
  | { readonly role: 'ip'; readonly dir: string; readonly network: string; readonly path: string }
  | { readonly role: 'network'; readonly dir: string; readonly network: string };

export interface DirWatchOptions {
  readonly logger: Logger;
  readonly settleMs: number;
  /** Targets that changed, once each, after the settle time. */
  onChanged(targets: Target[]): void;
  /** The kernel dropped events (no name given): only a full rescan can tell what changed. */
  onOverflow(): void;
}

export interface DirWatches {
  /** Watches `dir` unless it is already watched; `target` says what a name in it stands for. */
  ensure(dir: string, target: (name: string) => Target): void;
  close(dir: string): void;
  /** Closes the watches of the directories below `dir` for which `keep` says no. */
  closeBelow(dir: string, keep?: (watched: string) => boolean): void;
  closeAll(): void;
  readonly size: number;
}

export function createDirWatches(opts: DirWatchOptions): DirWatches {
  const watchers = new Map<string, FSWatcher>();
  const dirty = new Map<string, Target>();
  let settleTimer: NodeJS.Timeout | null = null;

  const markDirty = (t: Target) => {
    // Hidden names are other tools' temp files mid-write; the rename into place is what counts.
    if (t.role !== 'network' && t.path.slice(t.path.lastIndexOf('/') + 1).startsWith('.')) return;
    dirty.set(t.role === 'network' ? join(t.dir, t.network) : t.path, t);
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
