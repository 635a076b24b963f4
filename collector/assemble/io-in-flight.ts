/** A read or write on its way to a stream: its frame, or the bytes a U record says went by untaken. */

import type { PayloadFrame } from '../../bpf/index.js';

export interface IoInFlight {
  /** When it reached the assembler (the caller's clock): what waits for its process are dated by. */
  since: number;
  readonly pid: number;
  readonly tid: number;
  readonly kind: 'read' | 'write';
  readonly fd: number;
  /** The open file it went to (see the protocol). */
  readonly file: string;
  readonly ts: number;
  /** Bytes the syscall moved. */
  readonly len: number;
  /** What was taken of them, from the start. */
  readonly bytes: Buffer;
  /** Every chunk line of it came. */
  readonly whole: boolean;
  /** A U record: bytes that went by without being taken. */
  readonly uncaptured?: boolean;
}

export function ioOf(frame: PayloadFrame, nowMs: number): IoInFlight {
  return { since: nowMs, pid: frame.pid, tid: frame.tid, kind: frame.kind, fd: frame.fd, file: frame.file, ts: frame.ts, len: frame.len, bytes: frame.bytes, whole: frame.whole };
}
