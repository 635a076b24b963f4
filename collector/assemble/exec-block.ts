/**
 * Decodes an exec's argv+env block, as the tracer sends it in 200-byte
 * chunks, into argv and the kept environment (CNI_* and trace context). The
 * full environment never leaves this function.
 */

import { ChunkedBuffer } from './chunked-buffer.js';
import { EXEC_BLOCK_CAP_BYTES } from '../../bpf/index.js';
import { keepCniEnv } from './cni-env.js';

export interface DecodedExecBlock {
  readonly argv: string[];
  readonly env: Record<string, string>;
  /** The block was larger than the capture cap or chunks were lost: kept entries past the cut are missing. */
  readonly truncated: boolean;
}

export function newExecBlock(blockBytes: number): ChunkedBuffer {
  return new ChunkedBuffer(blockBytes, EXEC_BLOCK_CAP_BYTES);
}

export function decodeExecBlock(block: ChunkedBuffer, argBytes: number): DecodedExecBlock {
  const bytes = block.bytes();
  const argv = splitNul(bytes.subarray(0, Math.min(argBytes, bytes.length)));
  const env = keepCniEnv(splitNul(bytes.subarray(Math.min(argBytes, bytes.length))));
  return { argv, env, truncated: !block.complete() || block.cut };
}

function splitNul(buf: Buffer): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      out.push(buf.toString('utf8', start, i));
      start = i + 1;
    }
  }
  if (start < buf.length) out.push(buf.toString('utf8', start));
  return out;
}
