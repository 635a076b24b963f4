/**
 * Which files of a conf dir a runtime loads, which one is the pod's network,
 * and why every other file is not: the rules of each loader (types.ts,
 * ConfLoader) applied to what is in the directory. Pure: the directory's
 * listing and bytes come in, verdicts go out.
 */

import { compareBytes } from './byte-order.js';
import { confKindOf, parseConf, type ParsedConf } from './conf-file.js';
import type { ConfLoader } from './types.js';

/** One name in a conf dir, as the shell found it (links are not followed). */
export interface ConfDirFile {
  readonly name: string;
  readonly path: string;
  readonly kind: 'file' | 'directory' | 'symlink' | 'other';
  readonly size: number;
  readonly mtimeMs: number;
  /** A regular file's bytes; otherwise why they were not read (null: not a regular file). */
  readonly read: { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly why: 'too-large' | 'unreadable'; readonly detail: string } | null;
  /** Where a symbolic link points. */
  readonly linkTarget?: string | null;
}

export type FileStatus =
  /** The pod's network (the runtime's default). */
  | 'active'
  /** Loaded as well: another network the runtime can attach (by name, or containerd's further networks). */
  | 'loaded'
  /** Looked at and refused or passed over; `why` says why. */
  | 'skipped'
  /** Never looked at: ordered after the files the runtime stops at. */
  | 'not-reached'
  /** Not a conf file for this runtime (another extension, a directory). */
  | 'ignored'
  /** A symbolic link cnirec does not follow: what the runtime makes of it is unknown. */
  | 'unchecked';

export interface FileVerdict {
  readonly file: ConfDirFile;
  readonly parsed: ParsedConf | null;
  readonly status: FileStatus;
  readonly why: string;
}

export interface SelectionOptions {
  readonly loader: ConfLoader;
  /** How the runtime is named in sentences ("containerd", "CRI-O"…). */
  readonly runtimeLabel: string;
  readonly maxConfNum?: number | null;
  readonly defaultNetwork?: string | null;
  /** Whether every plugin a parsed conf names is in the bin dirs (CRI-O and podman skip a conf that fails this). */
  readonly pluginsFound?: (conf: Extract<ParsedConf, { ok: true }>) => boolean;
}

export interface Selection {
  /** Every name in the directory, in the runtime's order (byte order), with its verdict. */
  readonly files: readonly FileVerdict[];
  /** The file holding the pod's network; null when there is none. */
  readonly active: FileVerdict | null;
  /** Set when the runtime loads no network at all from this directory, saying why. */
  readonly loadFailure: string | null;
}

export function selectConfFiles(files: readonly ConfDirFile[], opts: SelectionOptions): Selection {
  const ordered = [...files].sort((a, b) => compareBytes(a.name, b.name));
  const verdicts: FileVerdict[] = [];
  const who = opts.runtimeLabel;
  const onlyLists = opts.loader === 'podman';
  const max = opts.loader === 'go-cni' ? (opts.maxConfNum ?? 1) : opts.loader === 'libcni' ? 1 : 0;
  const names = new Map<string, string>();
  let loaded = 0;
  let loadFailure: string | null = null;
  let stopped = false;

  for (const file of ordered) {
    const kind = confKindOf(file.name);
    const verdict = (parsed: ParsedConf | null, status: FileStatus, why: string) => void verdicts.push({ file, parsed, status, why });
    if (file.kind === 'directory') verdict(null, 'ignored', 'a directory');
    else if (kind === null || (onlyLists && kind !== 'conflist')) verdict(null, 'ignored', onlyLists ? `${who} loads only .conflist files` : 'not a .conf, .conflist or .json file');
    else if (stopped) {
      // Parsed all the same: what is wrong with it shows up the day it sorts first.
      const parsed = file.kind === 'file' && file.read?.ok ? parseConf(file.name, file.read.bytes) : null;
      verdict(parsed, 'not-reached', max === 1 ? `${who} uses only the first file` : `${who} loads only the first ${max} files (max_conf_num)`);
    }
    else if (file.kind === 'symlink') {
      verdict(null, 'unchecked', `a symbolic link${file.linkTarget ? ` to ${file.linkTarget}` : ''}: runtimes follow it, cnirec does not; check its target by hand`);
      loaded++;
    } else if (file.kind !== 'file' || file.read === null) verdict(null, 'skipped', 'not a regular file');
    else if (!file.read.ok) {
      const why = file.read.detail;
      if (opts.loader === 'go-cni' || opts.loader === 'libcni') {
        loadFailure ??= `${who} cannot load ${file.name} (${why})`;
        stopped = true;
      }
      verdict(null, 'skipped', why);
    } else {
      const parsed = parseConf(file.name, file.read.bytes);
      if (!parsed.ok) {
        if (opts.loader === 'go-cni' || opts.loader === 'libcni') {
          // containerd stops at the first file it cannot load: nothing after it loads either.
          loadFailure ??= `${who} fails to load ${file.name} (${parsed.error})`;
          stopped = true;
        }
        verdict(parsed, 'skipped', parsed.error);
        continue;
      }
      const name = parsed.name ?? file.name;
      const validates = opts.loader === 'ocicni' || opts.loader === 'podman';
      if (validates && opts.pluginsFound && !opts.pluginsFound(parsed)) {
        verdict(parsed, 'skipped', `a plugin it needs is not in the bin dirs, so ${who} skips it`);
        continue;
      }
      const earlier = names.get(name);
      if (earlier !== undefined && validates) {
        verdict(parsed, 'skipped', `network "${name}" is already defined by ${earlier}; ${who} ignores this one`);
        continue;
      }
      names.set(name, earlier ?? file.name);
      loaded++;
      verdict(parsed, 'loaded', '');
      if (max > 0 && loaded >= max) stopped = true;
    }
  }

  const failsWhole = loadFailure !== null && (opts.loader === 'go-cni' || opts.loader === 'libcni');
  const active = failsWhole ? null : pickActive(verdicts, opts);
  const final = verdicts.map((v) => (v === active ? { ...v, status: 'active' as const, why: whyActive(v, opts) } : v.status === 'loaded' ? { ...v, why: alsoLoaded(opts) } : v));
  if (loaded === 0 && loadFailure === null) loadFailure = `${who} finds no network it can load`;
  return { files: final, active: active ? (final[verdicts.indexOf(active)] ?? null) : null, loadFailure: active ? null : loadFailure };
}

function pickActive(verdicts: readonly FileVerdict[], opts: SelectionOptions): FileVerdict | null {
  const usable = verdicts.filter((v) => v.status === 'loaded' || v.status === 'unchecked');
  if (opts.defaultNetwork && (opts.loader === 'ocicni' || opts.loader === 'podman')) {
    return usable.find((v) => v.parsed?.ok && (v.parsed.name ?? v.file.name) === opts.defaultNetwork) ?? null;
  }
  if (opts.loader === 'podman') return null;
  return usable[0] ?? null;
}

function whyActive(v: FileVerdict, opts: SelectionOptions): string {
  if (opts.defaultNetwork && (opts.loader === 'ocicni' || opts.loader === 'podman')) return `its network "${opts.defaultNetwork}" is ${opts.runtimeLabel}'s default network`;
  return `the first conf file in byte order that ${opts.runtimeLabel} loads`;
}

function alsoLoaded(opts: SelectionOptions): string {
  if (opts.loader === 'podman') return 'loaded: attached to containers that name it (--network)';
  if (opts.loader === 'go-cni') return 'loaded as a further network of every pod (max_conf_num > 1)';
  return 'loaded, not the default network';
}
