/**
 * Full scans of the watched directories: every file looked at (a read only
 * when it is new or its inode, size or times changed), whatever was known
 * under a directory and is not there any more reported gone, and each
 * directory put under a watch as it is found.
 *
 * Files are looked at synchronously (see read-bounded.ts) in slices of a
 * few milliseconds, yielding to the event loop between slices, so a scan of
 * tens of thousands of files never holds up the API or the tracer's output
 * for longer than one slice.
 */

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Known, Observation } from './cache-diff.js';
import type { DirWatches, Target } from './dir-watches.js';
import { observeReservation, observeResult } from './observe-file.js';

export interface ScanContext {
  readonly resultDirs: readonly string[];
  readonly ipamDirs: readonly string[];
  readonly known: ReadonlyMap<string, Known>;
  apply(path: string, now: Observation): void;
  readonly watches: DirWatches;
  /** False once stopped: a scan still running then watches nothing new. */
  canWatch(): boolean;
}

export interface DirScanner {
  /** Scans every directory; returns those read completely (their absent files are gone for sure). */
  fullScan(): Promise<string[]>;
  /** Looks again at one target a watch reported. */
  lookAt(t: Target): Promise<void>;
}

/** How long one synchronous slice of a scan may hold the event loop. */
const SLICE_MS = 8;

export function createDirScanner(ctx: ScanContext): DirScanner {
  const { known, apply, watches } = ctx;

  const lookAtResult = (dir: string, path: string, listed: boolean) => {
    const now = observeResult({ dir, path, known: known.get(path)?.key, listed });
    if (now) apply(path, now);
  };
  const lookAtReservation = (dir: string, network: string, path: string, listed: boolean) => {
    const now = observeReservation({ dir, path, known: known.get(path)?.key, listed }, network);
    if (now) apply(path, now);
  };
  const watch = (dir: string, target: (name: string) => Target) => {
    if (ctx.canWatch()) watches.ensure(dir, target);
  };

  /** Lists `dir`; null when it is missing (nothing there), 'unreadable' (a problem) when it cannot be read. */
  const list = async (dir: string, parentDir: string): Promise<{ names: string[]; subdirs: string[] } | null | 'unreadable'> => {
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      if (known.get(dir)?.kind === 'problem') apply(dir, { kind: 'gone', path: dir, dir: parentDir });
      const names: string[] = [];
      const subdirs: string[] = [];
      for (const e of entries) {
        // Hidden names are other tools' temp files mid-write; the rename into place is what counts.
        if (e.name.startsWith('.')) continue;
        // A symlink is reported as a link, not as what it points to: never followed as a directory.
        (e.isDirectory() ? subdirs : names).push(e.name);
      }
      return { names, subdirs };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (known.get(dir)?.kind === 'problem') apply(dir, { kind: 'gone', path: dir, dir: parentDir });
        return null;
      }
      apply(dir, {
        kind: 'problem',
        key: null,
        problem: { kind: 'directory-unreadable', path: dir, dir: parentDir, message: `cannot list ${dir}: ${(err as Error).message}; its files are not followed until it can be read` },
      });
      return 'unreadable';
    }
  };

  /** Reports gone every known path under `prefix` (found in `dir`) that `seen` lacks. */
  const sweep = (dir: string, prefix: string, seen: ReadonlySet<string>) => {
    const gone: string[] = [];
    for (const [path, k] of known) {
      const kDir = k.kind === 'entry' ? k.entry.dir : k.kind === 'ip' ? k.allocation.dir : k.problem.dir;
      if (kDir === dir && path.startsWith(prefix) && path !== dir && !seen.has(path)) gone.push(path);
    }
    for (const path of gone) apply(path, { kind: 'gone', path, dir });
  };

  const scanResultsDir = async (dir: string): Promise<boolean> => {
    const listing = await list(dir, dir);
    if (listing === 'unreadable') return false;
    if (listing === null) {
      watches.close(dir);
      sweep(dir, `${dir}/`, new Set());
      return true;
    }
    watch(dir, (name) => ({ role: 'result', dir, path: join(dir, name) }));
    const paths = listing.names.map(childPath(dir));
    await forEachSliced(paths, (path) => lookAtResult(dir, path, true));
    sweep(dir, `${dir}/`, new Set(paths));
    return true;
  };

  const scanNetworkDir = async (dir: string, network: string): Promise<boolean> => {
    const netDir = join(dir, network);
    const listing = await list(netDir, dir);
    if (listing === 'unreadable') return false;
    let paths: string[] = [];
    if (listing === null) {
      watches.close(netDir);
    } else {
      watch(netDir, (name) => ({ role: 'ip', dir, network, path: join(netDir, name) }));
      paths = listing.names.map(childPath(netDir));
      await forEachSliced(paths, (path) => lookAtReservation(dir, network, path, true));
    }
    sweep(dir, `${netDir}/`, new Set(paths));
    return true;
  };

  const scanIpamDir = async (dir: string): Promise<boolean> => {
    const listing = await list(dir, dir);
    if (listing === 'unreadable') return false;
    if (listing === null) {
      watches.close(dir);
      watches.closeBelow(dir);
      sweep(dir, `${dir}/`, new Set());
      return true;
    }
    watch(dir, (name) => ({ role: 'network', dir, network: name }));
    let complete = true;
    for (const network of listing.subdirs) complete = (await scanNetworkDir(dir, network)) && complete;
    const networks = new Set(listing.subdirs.map((n) => join(dir, n)));
    const gone: string[] = [];
    for (const [path, k] of known) if (k.kind === 'ip' && k.allocation.dir === dir && !networks.has(join(dir, k.allocation.network))) gone.push(path);
    for (const path of gone) apply(path, { kind: 'gone', path, dir });
    watches.closeBelow(dir, (w) => networks.has(w));
    return complete;
  };

  return {
    async fullScan() {
      const complete: string[] = [];
      for (const dir of ctx.resultDirs) if (await scanResultsDir(dir)) complete.push(dir);
      for (const dir of ctx.ipamDirs) if (await scanIpamDir(dir)) complete.push(dir);
      return complete;
    },
    async lookAt(t) {
      if (t.role === 'result') lookAtResult(t.dir, t.path, false);
      else if (t.role === 'ip') lookAtReservation(t.dir, t.network, t.path, false);
      else await scanNetworkDir(t.dir, t.network);
    },
  };
}

/**
 * `join(dir, name)` for names from a listing (no '/', never '.' or '..'), without normalising the whole
 * path once per file: the prefix is what join gives for any such name.
 */
function childPath(dir: string): (name: string) => string {
  const prefix = join(dir, 'x').slice(0, -1);
  return (name) => prefix + name;
}

/** Runs `fn` over `items` in slices of about SLICE_MS, yielding to the event loop between them. */
async function forEachSliced<T>(items: readonly T[], fn: (item: T) => void): Promise<void> {
  let i = 0;
  while (i < items.length) {
    const end = performance.now() + SLICE_MS;
    do fn(items[i++]!);
    while (i < items.length && performance.now() < end);
    if (i < items.length) await new Promise((resolve) => setImmediate(resolve));
  }
}
