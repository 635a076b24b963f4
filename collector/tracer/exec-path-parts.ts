/**
 * The path lines of one exec (tracer-protocol.ts): the N lines that carry a
 * path longer than the X line holds, and the C lines that name the working
 * directory a relative path was resolved against. The framer gathers them
 * into the exec's frame. Pure: what the kernel resolved is rebuilt, nothing
 * is looked up.
 */

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

  /** The path of an exec none of whose N lines came: the X line's; from 199 bytes on N lines follow, so it may be cut (they were lost). */
  static headerOnly(headerPath: string): { filename: string; cut: boolean } {
    return { filename: headerPath, cut: Buffer.byteLength(headerPath) >= EXEC_HEADER_PATH_BYTES };
  }

  /** The path as the exec gave it (relative or not), and whether it is cut. */
  filename(headerPath: string): { filename: string; cut: boolean } {
    const chunks = this.chunks;
    if (chunks === null) return ExecPathParts.headerOnly(headerPath);
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
