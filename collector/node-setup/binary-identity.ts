/**
 * Which binary a plugin call ran: the file at its path, identified by
 * device, inode, size and mtime, with its sha256. Hashing reads the whole
 * binary (tens of MB for some plugins), so it is done once per file version
 * and cached, asynchronously, off the capture path: the daemon queues the
 * calls' paths and a single worker looks at them (binary-provenance.ts in
 * daemon/). Links are followed: the kernel ran what the path pointed to.
 *
 * The look happens just after the exec, so a binary replaced in between is
 * attributed to the call that ran the old one; upgrades are rare and the
 * next call shows the new version.
 */

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';

export interface BinaryVersion {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  /** Null when the file could not be hashed (`problem` says why). */
  readonly sha256: string | null;
  readonly problem: string | null;
}

export interface BinaryHasher {
  /** The version of the file at `path` now; null when there is none (removed, not absolute). */
  identify(path: string): Promise<BinaryVersion | null>;
  /** Files hashed since start (each version once). */
  readonly hashed: number;
}

/** Plugins are up to ~100 MB; a bigger file at a plugin path is not hashed (it would take seconds of disk). */
const MAX_HASH_BYTES = 256 * 1024 * 1024;
/** Paths remembered; a node runs a few dozen plugins. */
const MAX_CACHED = 1024;

const keyOf = (v: { dev: number; ino: number; sizeBytes: number; mtimeMs: number }) => `${v.dev}:${v.ino}:${v.sizeBytes}:${v.mtimeMs}`;

export function createBinaryHasher(): BinaryHasher {
  const cache = new Map<string, BinaryVersion>();
  let hashed = 0;

  const hashFile = (path: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const h = createHash('sha256');
      createReadStream(path)
        .on('data', (chunk) => h.update(chunk))
        .on('error', reject)
        .on('end', () => resolve(h.digest('hex')));
    });

  return {
    get hashed() {
      return hashed;
    },
    async identify(path) {
      if (!path.startsWith('/')) return null;
      for (let attempt = 0; attempt < 2; attempt++) {
        const st = await stat(path).catch(() => null);
        if (!st || !st.isFile()) return null;
        const id = { dev: st.dev, ino: st.ino, sizeBytes: st.size, mtimeMs: Math.floor(st.mtimeMs) };
        const cached = cache.get(path);
        if (cached && keyOf(cached) === keyOf(id)) return cached;
        let version: BinaryVersion;
        if (st.size > MAX_HASH_BYTES) {
          version = { path, ...id, sha256: null, problem: `${st.size} bytes, over the ${MAX_HASH_BYTES}-byte limit for hashing` };
        } else {
          const sha256 = await hashFile(path).catch((err: Error) => err);
          const after = await stat(path).catch(() => null);
          // Rewritten while it was read: look again, once.
          if (after && keyOf({ dev: after.dev, ino: after.ino, sizeBytes: after.size, mtimeMs: Math.floor(after.mtimeMs) }) !== keyOf(id) && attempt === 0) continue;
          version = typeof sha256 === 'string' ? { path, ...id, sha256, problem: null } : { path, ...id, sha256: null, problem: `cannot read it: ${sha256.message}` };
          if (typeof sha256 === 'string') hashed++;
        }
        cache.delete(path);
        cache.set(path, version);
        if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
        return version;
      }
      return null;
    },
  };
}
