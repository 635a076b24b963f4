/**
 * Splits a byte stream into lines without unbounded buffering: a "line"
 * longer than `maxLineBytes` is dropped and reported, not kept in memory.
 * Lines are handed over as bytes (decoding is the parser's business, and
 * most tracer lines never need to become strings).
 */

export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overflowing = false;

  constructor(
    /** The line without its newline; valid only during the call (it may view the input chunk). */
    private readonly onLine: (line: Buffer) => void,
    private readonly onOverlong: (bytes: number) => void,
    private readonly maxLineBytes = 64 * 1024,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl), true);
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start), false);
  }

  /** Emits what is left when the stream ends. */
  end(): void {
    if (this.pendingBytes > 0 || this.overflowing) this.take(Buffer.alloc(0), true);
  }

  private take(part: Buffer, ends: boolean): void {
    if (ends && this.pendingBytes === 0 && !this.overflowing && part.length <= this.maxLineBytes) {
      this.emit(part);
      return;
    }
    if (!this.overflowing && this.pendingBytes + part.length > this.maxLineBytes) {
      this.overflowing = true;
      this.pending = [];
    }
    if (this.overflowing) {
      this.pendingBytes += part.length;
    } else if (part.length > 0) {
      this.pending.push(Buffer.from(part));
      this.pendingBytes += part.length;
    }
    if (!ends) return;
    if (this.overflowing) this.onOverlong(this.pendingBytes);
    else this.emit(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
    this.overflowing = false;
  }

  private emit(line: Buffer): void {
    this.onLine(line.length > 0 && line[line.length - 1] === 13 ? line.subarray(0, -1) : line);
  }
}
