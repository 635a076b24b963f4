/**
 * The I/O half of the conf and bin dir checks: a conf dir's names (links
 * are not followed: one is reported with its target) and the bytes of its
 * regular files, size-capped and read without blocking on FIFOs; a bin
 * dir's names described by stat, as libcni's lookup follows links.
 */

import { lstatSync, readdirSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { readBounded } from '../cache/index.js';
import type { BinDirListing, BinEntry } from './bin-dirs.js';
import type { ConfDirListing } from './check-view.js';
import type { ConfDirFile } from './conf-selection.js';

/** libcni's conf files are a few KiB; go-cni refuses big ones too. */
export const MAX_CONF_FILE_BYTES = 1024 * 1024;

export function readConfDir(dir: string): ConfDirListing {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { dir, exists: false, error: null, files: [] };
    return { dir, exists: true, error: (err as Error).message, files: [] };
  }
  const files: ConfDirFile[] = [];
  for (const name of names) {
    const f = readConfFile(join(dir, name), name);
    if (f) files.push(f);
  }
  return { dir, exists: true, error: null, files };
}

/** One name of a conf dir; null when it vanished meanwhile. */
export function readConfFile(path: string, name: string): ConfDirFile | null {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return null;
  }
  const base = { name, path, size: st.size, mtimeMs: st.mtimeMs };
  if (st.isDirectory()) return { ...base, kind: 'directory', read: null };
  if (st.isSymbolicLink()) return { ...base, kind: 'symlink', read: null, linkTarget: linkTarget(path) };
  if (!st.isFile()) return { ...base, kind: 'other', read: null };
  const r = readBounded(path, MAX_CONF_FILE_BYTES);
  switch (r.kind) {
    case 'bytes':
      return { ...base, mtimeMs: r.mtimeMs, size: r.bytes.length, kind: 'file', read: { ok: true, bytes: r.bytes } };
    case 'too-large':
      return { ...base, kind: 'file', read: { ok: false, why: 'too-large', detail: `${r.size} bytes, over the ${MAX_CONF_FILE_BYTES}-byte limit: not a network config runtimes load` } };
    case 'unreadable':
      return { ...base, kind: 'file', read: { ok: false, why: 'unreadable', detail: `cannot be read (${r.why})` } };
    case 'not-a-regular-file':
      return { ...base, kind: 'other', read: null };
    case 'gone':
      return null;
  }
}

export function readBinDir(dir: string): BinDirListing {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { dir, exists: false, error: null, entries: new Map() };
    return { dir, exists: true, error: (err as Error).message, entries: new Map() };
  }
  const entries = new Map<string, BinEntry>();
  for (const name of names) {
    const path = join(dir, name);
    let link: Stats;
    try {
      link = lstatSync(path);
    } catch {
      continue;
    }
    const target = link.isSymbolicLink() ? linkTarget(path) : null;
    try {
      const st = statSync(path);
      entries.set(name, { kind: st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other', mode: st.mode, size: st.size, mtimeMs: st.mtimeMs, linkTarget: target });
    } catch {
      entries.set(name, { kind: 'broken-link', mode: 0, size: 0, mtimeMs: link.mtimeMs, linkTarget: target });
    }
  }
  return { dir, exists: true, error: null, entries };
}

function linkTarget(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
