/**
 * The cache directories read once, whole, for a command that acts on what is
 * there now (`cnirec gc`) rather than following it: libcni's cache entries and
 * host-local's reservations, through the watcher's own reads (no link
 * followed, no FIFO waited on, nothing huge read) and parsers.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CacheEntry, CacheProblem, IpAllocation } from './cache-types.js';
import { observeReservation, observeResult } from './observe-file.js';

export interface CacheDirsNow {
  readonly entries: CacheEntry[];
  readonly allocations: IpAllocation[];
  /** Files and directories that could not be read or made sense of. */
  readonly problems: CacheProblem[];
}

/** Names in `dir` (hidden ones are others' temp files); null when it does not exist. */
function list(dir: string, problems: CacheProblem[], parent: string): { files: string[]; dirs: string[] } | null {
  try {
    const files: string[] = [];
    const dirs: string[] = [];
    for (const e of readdirSync(dir, { withFileTypes: true })) if (!e.name.startsWith('.')) (e.isDirectory() ? dirs : files).push(e.name);
    return { files, dirs };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push({ kind: 'directory-unreadable', path: dir, dir: parent, message: `cannot list ${dir}: ${(err as Error).message}` });
    return null;
  }
}

export function readCacheDirsOnce(resultDirs: readonly string[], ipamDirs: readonly string[]): CacheDirsNow {
  const entries: CacheEntry[] = [];
  const allocations: IpAllocation[] = [];
  const problems: CacheProblem[] = [];
  for (const dir of resultDirs) {
    for (const name of list(dir, problems, dir)?.files ?? []) {
      const o = observeResult({ dir, path: join(dir, name), known: undefined, listed: true });
      if (o?.kind === 'entry') entries.push(o.entry);
      else if (o?.kind === 'problem') problems.push(o.problem);
    }
  }
  for (const dir of ipamDirs) {
    for (const network of list(dir, problems, dir)?.dirs ?? []) {
      const netDir = join(dir, network);
      for (const name of list(netDir, problems, dir)?.files ?? []) {
        const o = observeReservation({ dir, path: join(netDir, name), known: undefined, listed: true }, network);
        if (o?.kind === 'ip') allocations.push(o.allocation);
        else if (o?.kind === 'problem') problems.push(o.problem);
      }
    }
  }
  return { entries, allocations, problems };
}
