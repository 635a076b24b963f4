/**
 * The absolute path an exec ran, from its frame's path and, for a relative
 * one, the working directory it was relative to. Pure: what the kernel
 * resolved is rebuilt, nothing is looked up.
 */

import path from 'node:path';

/**
 * The absolute path of what an exec ran: a relative path resolved against
 * the working directory the kernel resolved it against. Without that
 * directory (an absolute path has none sent; a walk that stopped short) the
 * path stays as it was given.
 */
export function resolveExecPath(filename: string, cwd: string | null): string {
  if (filename.startsWith('/') || cwd === null || filename.length === 0) return filename;
  return path.posix.resolve(cwd, filename);
}
