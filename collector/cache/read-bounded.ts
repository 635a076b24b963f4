/**
 * Reads one watched file without ever blocking or following a link: opened
 * O_NOFOLLOW (a symlink could point anywhere on the node) and O_NONBLOCK (a
 * FIFO dropped into the directory would otherwise stall the watcher), then
 * fstat'ed so the size check and the bytes are of the same inode.
 */

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

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

export async function readBounded(path: string, maxBytes: number): Promise<BoundedRead> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'gone' };
    if (code === 'ELOOP') return { kind: 'not-a-regular-file', why: 'it is a symbolic link, which cnirec does not follow' };
    return { kind: 'unreadable', why: (err as Error).message };
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { kind: 'not-a-regular-file', why: 'it is not a regular file' };
    const key = statKey(st);
    if (st.size > maxBytes) return { kind: 'too-large', size: st.size, key, mtimeMs: st.mtimeMs };
    // Read one byte past the limit: a file that grew since the fstat is still caught.
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    if (n > maxBytes) return { kind: 'too-large', size: n, key, mtimeMs: st.mtimeMs };
    return { kind: 'bytes', bytes: buf.subarray(0, n), key, mtimeMs: st.mtimeMs };
  } catch (err) {
    return { kind: 'unreadable', why: (err as Error).message };
  } finally {
    await fh.close().catch(() => undefined);
  }
}
