/**
 * Reads one watched file without ever blocking on it or following a link:
 * opened O_NOFOLLOW (a symlink could point anywhere on the node) and
 * O_NONBLOCK (a FIFO dropped into the directory would otherwise stall the
 * watcher), then fstat'ed so the size check and the bytes are of the same
 * inode, and only a regular file is read.
 *
 * Synchronous on purpose: these are small files on a local disk, read in
 * time-boxed slices by the watcher (see forEachSliced). An asynchronous read
 * goes through libuv's thread pool four times per file (open, fstat, read,
 * close), which cost three times the CPU of the system calls themselves:
 * at startup, with 10,000 files, that was most of the reconciliation time.
 */

import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';

export type BoundedRead =
  | { readonly kind: 'bytes'; readonly bytes: Buffer; readonly key: string; readonly mtimeMs: number }
  | { readonly kind: 'too-large'; readonly size: number; readonly key: string; readonly mtimeMs: number }
  | { readonly kind: 'not-a-regular-file'; readonly why: string }
  | { readonly kind: 'gone' }
  | { readonly kind: 'unreadable'; readonly why: string };

/** Identity of one version of a file: a rewrite in place or a rename over it changes one of these. */
export function statKey(st: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function readBounded(path: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'gone' };
    if (code === 'ELOOP') return { kind: 'not-a-regular-file', why: 'it is a symbolic link, which cnirec does not follow' };
    return { kind: 'unreadable', why: (err as Error).message };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: 'not-a-regular-file', why: 'it is not a regular file' };
    const key = statKey(st);
    if (st.size > maxBytes) return { kind: 'too-large', size: st.size, key, mtimeMs: st.mtimeMs };
    // Read one byte past the limit: a file that grew since the fstat is still caught.
    const buf = Buffer.allocUnsafe(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, n);
      if (got === 0) break;
      n += got;
      if (n === buf.length) break;
    }
    if (n > maxBytes) return { kind: 'too-large', size: n, key, mtimeMs: st.mtimeMs };
    return { kind: 'bytes', bytes: buf.subarray(0, n), key, mtimeMs: st.mtimeMs };
  } catch (err) {
    return { kind: 'unreadable', why: (err as Error).message };
  } finally {
    closeSync(fd);
  }
}

/**
 * The file's own metadata (a link is not followed); null when it is gone or its directory is, or cannot be
 * looked at (a directory it cannot read is reported by its listing).
 */
export function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
