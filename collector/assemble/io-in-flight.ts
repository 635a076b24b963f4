/** A read or write on its way to a stream: its header, and the payload bytes gathered for it. */

import type { ChunkedBuffer } from './chunked-buffer.js';

export interface IoInFlight {
  /** When its header arrived (the caller's clock). */
  since: number;
  pid: number;
  tid: number;
  kind: 'read' | 'write';
  fd: number;
  /** The open file it went to (see the protocol). */
  file: string;
  ts: number;
  buf: ChunkedBuffer;
  /** A U record: bytes that went by without being taken. */
  uncaptured?: boolean;
}
