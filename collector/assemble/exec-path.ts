/**
 * The path an exec ran, from what the tracer sends: the X line's path (cut
 * at 199 bytes), the N lines that carry a longer one whole, and for a
 * relative path the C lines that name the working directory it was relative
 * to. Pure: what the kernel resolved is rebuilt, nothing is looked up.
 */

import path from 'node:path';
import { ChunkedBuffer } from './chunked-buffer.js';
import { CWD_WALK_STEPS, EXEC_HEADER_PATH_BYTES, EXEC_PATH_CAP_BYTES } from '../../bpf/index.js';

/** What arrived of one exec's path and working directory, before its B chunks. */
export class ExecPathParts {
  private chunks: ChunkedBuffer | null = null;
  /** Working directory names by depth (0: the innermost); `rootDepth` where the walk reached the root. */
  private readonly cwdNames: Buffer[] = [];
  private rootDepth: number | null = null;

  addPathChunk(len: number, off: number, data: Buffer): void {
    if (this.chunks === null || this.chunks.length !== len) this.chunks = new ChunkedBuffer(len, EXEC_PATH_CAP_BYTES);
    this.chunks.add(off, data);
  }

  addCwdName(depth: number, name: Buffer): void {
    // No walk goes deeper: a depth past it is no line of the tracer's.
    if (depth >= CWD_WALK_STEPS) return;
    if (name.length === 0) this.rootDepth = depth;
    else this.cwdNames[depth] = name;
  }

  /** The path as the exec gave it (relative or not), and whether it is cut. */
  filename(headerPath: string): { filename: string; cut: boolean } {
    const chunks = this.chunks;
    if (chunks === null) {
      // From 199 bytes on N lines follow: none came, so the path here may be cut (they were lost).
      return { filename: headerPath, cut: Buffer.byteLength(headerPath) >= EXEC_HEADER_PATH_BYTES };
    }
    if (chunks.complete() && !chunks.cut) return { filename: chunks.bytes().toString('utf8'), cut: false };
    const prefix = chunks.bytes().toString('utf8');
    return { filename: prefix.length > headerPath.length ? prefix : headerPath, cut: true };
  }

  /** The working directory, absolute; null when the walk stopped short or a name is missing. */
  cwd(): string | null {
    const depth = this.rootDepth;
    if (depth === null) return null;
    const names: string[] = [];
    for (let d = depth - 1; d >= 0; d--) {
      const name = this.cwdNames[d];
      if (name === undefined) return null;
      names.push(name.toString('utf8'));
    }
    return `/${names.join('/')}`;
  }
}

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
