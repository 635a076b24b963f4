/**
 * The node's CNI files as they are when a bundle is taken, under
 * node/files/<their path>: every conf dir file (through the same JSON-key
 * redaction as the conf history), libcni's cache files (config, result, args
 * redacted as the cache entries are) and host-local's reservations (an
 * address, a container id and an interface: nothing to hide). Bounded: a
 * node with 300,000 cache files (multus litter) gets the first ones and the
 * count of the rest. node/files.json lists what was looked at and why each
 * file was or was not taken.
 */

import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Redactor } from '../collector/index.js';
import type { Stage } from './bundle-stage.js';
import { redactConf } from './node-setup-wiring.js';

/** Per kind of file: a node with more is a finding of its own; the listing says how many were left. */
const MAX_FILES_PER_KIND = 5_000;
/** Conf and cache files are a few KiB; anything this big is not one. */
const MAX_FILE_BYTES = 1024 * 1024;

export type NodeFileKind = 'conf' | 'cache' | 'host-local';

export interface NodeFileListing {
  readonly path: string;
  readonly kind: NodeFileKind;
  readonly bytes: number | null;
  readonly mtime: string | null;
  /** Where it is in the bundle; null when not taken. */
  readonly copiedAs: string | null;
  readonly redacted: boolean;
  readonly linkTarget: string | null;
  readonly why: string | null;
}

export interface NodeFileDirs {
  readonly confDirs: readonly string[];
  readonly cacheDirs: readonly string[];
  readonly hostLocalDirs: readonly string[];
}

/** The files under each dir to look at: conf and cache dirs are flat, host-local's one level deeper (a dir per network). */
async function filesIn(dir: string, depth: number): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const p = path.join(dir, n);
    const s = await lstat(p).catch(() => null);
    if (s?.isDirectory() && depth > 0) out.push(...(await filesIn(p, depth - 1)));
    else if (s && !s.isDirectory()) out.push(p);
  }
  return out;
}

export async function stageNodeFiles(stage: Stage, dirs: NodeFileDirs, redactor: Redactor): Promise<NodeFileListing[]> {
  const listing: NodeFileListing[] = [];
  const kinds: [NodeFileKind, readonly string[], number, (b: Buffer) => Buffer][] = [
    ['conf', dirs.confDirs, 0, (b) => redactConf(redactor, b)?.bytes ?? b],
    ['cache', dirs.cacheDirs, 0, (b) => redactor.cacheFile(b)],
    ['host-local', dirs.hostLocalDirs, 1, (b) => b],
  ];
  for (const [kind, roots, depth, redact] of kinds) {
    let taken = 0;
    for (const root of [...new Set(roots.map((r) => path.resolve(r)))]) {
      for (const file of await filesIn(root, depth)) {
        listing.push(await stageOne(stage, file, kind, redact, taken >= MAX_FILES_PER_KIND));
        if (listing.at(-1)!.copiedAs !== null) taken++;
      }
    }
  }
  return listing;
}

async function stageOne(stage: Stage, file: string, kind: NodeFileKind, redact: (b: Buffer) => Buffer, over: boolean): Promise<NodeFileListing> {
  const l = await lstat(file).catch(() => null);
  const linkTarget = l?.isSymbolicLink() ? await readlink(file).catch(() => null) : null;
  const s = await stat(file).catch(() => null);
  const base = { path: file, kind, bytes: s?.size ?? null, mtime: s ? new Date(s.mtimeMs).toISOString() : null, linkTarget };
  const skip = (why: string): NodeFileListing => ({ ...base, copiedAs: null, redacted: false, why });
  if (s === null) return skip(linkTarget === null ? 'unreadable' : 'a symlink to nothing');
  if (!s.isFile()) return skip('not a regular file');
  if (over) return skip(`more than ${MAX_FILES_PER_KIND} ${kind} files: left out`);
  if (s.size > MAX_FILE_BYTES) return skip(`larger than ${MAX_FILE_BYTES / 1024} KiB: left out`);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    return skip(`unreadable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const kept = redact(bytes);
  const name = `node/files${file}`;
  await stage.add(name, kept, `${kind} file ${file} as it was${kept !== bytes ? ', secrets redacted' : ''}`);
  return { ...base, copiedAs: name, redacted: kept !== bytes, why: null };
}
