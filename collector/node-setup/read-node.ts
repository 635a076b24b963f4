/**
 * Reads the node for the doctor: runtimes and their CNI paths, then every
 * conf dir and bin dir the checks will look at. Synchronous: a handful of
 * small files, read once per `cnirec doctor` or API request.
 */

import type { BinDirListing } from './bin-dirs.js';
import type { ConfDirListing } from './check-view.js';
import type { NodeSnapshot } from './doctor.js';
import { readBinDir, readConfDir } from './read-dirs.js';
import { discoverRuntimes } from './read-runtimes.js';
import { buildViews, type Requested } from './views.js';

export interface ReadNodeOptions {
  readonly requested: Requested;
  readonly env: NodeJS.ProcessEnv;
  readonly procDir?: string;
}

export function readNode(opts: ReadNodeOptions): NodeSnapshot {
  const found = discoverRuntimes({ env: opts.env, ...(opts.procDir ? { procDir: opts.procDir } : {}) });
  const { views } = buildViews(found.runtimes, opts.requested);
  const confDirs = new Map<string, ConfDirListing>();
  const binDirs = new Map<string, BinDirListing>();
  for (const v of views) {
    if (!confDirs.has(v.confDir)) confDirs.set(v.confDir, readConfDir(v.confDir));
    for (const d of v.binDirs) if (!binDirs.has(d)) binDirs.set(d, readBinDir(d));
  }
  return { runtimes: found.runtimes, runtimeProblems: found.problems, requested: opts.requested, confDirs, binDirs };
}

/** The conf dirs the daemon follows for history: the ones given by hand, else those the runtimes read. */
export function confDirsToWatch(opts: ReadNodeOptions): string[] {
  const found = discoverRuntimes({ env: opts.env, ...(opts.procDir ? { procDir: opts.procDir } : {}) });
  return [...new Set(buildViews(found.runtimes, opts.requested).views.map((v) => v.confDir))];
}
