/**
 * Plugin lookup as libcni's invoke.FindInPath does it: for each bin dir in
 * order, `<dir>/<type>`, followed through links (os.Stat), the first regular
 * file wins. It does not check the execute bit; exec then fails with
 * "permission denied". Pure: the shell lists the bin dirs.
 */

/** One name in a bin dir, described by stat (links followed). */
export interface BinEntry {
  readonly kind: 'file' | 'directory' | 'other' | 'broken-link';
  readonly mode: number;
  readonly size: number;
  readonly mtimeMs: number;
  /** Set when the name is a symbolic link: its target. */
  readonly linkTarget: string | null;
}

export interface BinDirListing {
  readonly dir: string;
  readonly exists: boolean;
  /** Why it could not be listed, when it exists. */
  readonly error: string | null;
  readonly entries: ReadonlyMap<string, BinEntry>;
}

export type PluginResolution =
  | { readonly status: 'found'; readonly path: string; readonly entry: BinEntry }
  | { readonly status: 'not-executable'; readonly path: string; readonly entry: BinEntry }
  | { readonly status: 'not-regular-file'; readonly path: string; readonly entry: BinEntry }
  | { readonly status: 'missing' };

export function resolvePlugin(type: string, binDirs: readonly string[], listings: ReadonlyMap<string, BinDirListing>): PluginResolution {
  // A type is a file name; one with a slash (or . / ..) names no plugin libcni would run from the bin dirs.
  if (type.includes('/') || type === '.' || type === '..') return { status: 'missing' };
  let notRegular: PluginResolution | null = null;
  for (const dir of binDirs) {
    const entry = listings.get(dir)?.entries.get(type);
    if (!entry) continue;
    const path = `${dir === '/' ? '' : dir}/${type}`;
    if (entry.kind !== 'file') {
      notRegular ??= { status: 'not-regular-file', path, entry };
      continue;
    }
    return (entry.mode & 0o111) === 0 ? { status: 'not-executable', path, entry } : { status: 'found', path, entry };
  }
  return notRegular ?? { status: 'missing' };
}
