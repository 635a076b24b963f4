/**
 * Reassembles one payload from fixed-size chunks that may overlap (the
 * tracer sends the last chunk as the bytes that end the payload) or start
 * before it (an exec block under one chunk is read from below its start).
 */

import { decodeHexInto, hexBytes } from '../../bpf/index.js';

export class ChunkedBuffer {
  private readonly buf: Buffer;
  private covered = 0;
  /** The payload was larger than the cap: its tail is not here. */
  readonly cut: boolean;

  constructor(
    /** Bytes the syscall (or exec block) really had. */
    readonly length: number,
    cap: number,
  ) {
    const kept = Math.min(length, cap);
    // Not zeroed: only bytes a chunk wrote are ever handed out (bytes() stops where contiguous coverage does).
    this.buf = Buffer.allocUnsafe(kept);
    this.cut = length > cap;
  }

  /** Copies the part of a chunk that falls inside the kept range. */
  add(off: number, data: Buffer): void {
    const from = Math.max(off, 0);
    const to = Math.min(off + data.length, this.buf.length);
    if (to <= from) return;
    data.copy(this.buf, from, from - off, to - off);
    this.cover(from, to);
  }

  /**
   * Decodes the part of a chunk line's hex (from `hexFrom`, its bytes at
   * `off`) that falls inside the kept range, straight into the buffer.
   * False, and nothing counted, when the hex is malformed.
   */
  addHex(line: Buffer, hexFrom: number, off: number): boolean {
    const from = Math.max(off, 0);
    const to = Math.min(off + hexBytes(line, hexFrom), this.buf.length);
    if (!decodeHexInto(line, hexFrom, this.buf, from, from - off, Math.max(0, to - from))) return false;
    if (to > from) this.cover(from, to);
    return true;
  }

  private cover(from: number, to: number): void {
    // Chunks come in order; coverage is the furthest contiguous byte seen.
    if (from <= this.covered) this.covered = Math.max(this.covered, to);
  }

  complete(): boolean {
    return this.covered >= this.buf.length;
  }

  /** The kept bytes; where chunks were lost, only the contiguous prefix. */
  bytes(): Buffer {
    return this.complete() ? this.buf : this.buf.subarray(0, this.covered);
  }
}
