/**
 * Decodes an exec's argv+env block (its frame's bytes) into argv and the
 * kept environment (CNI_* and trace context). The full environment never
 * leaves this function.
 */

import { EXEC_BLOCK_CAP_BYTES, type ExecFrame } from '../../bpf/index.js';
import { keepCniEnv } from './cni-env.js';

export interface DecodedExecBlock {
  readonly argv: string[];
  readonly env: Record<string, string>;
  /** The block was larger than the capture cap or chunks were lost: kept entries past the cut are missing. */
  readonly truncated: boolean;
}

export function decodeExecBlock(exec: ExecFrame): DecodedExecBlock {
  const bytes = exec.block;
  const args = Math.min(exec.argBytes, bytes.length);
  const argv = splitNul(bytes.subarray(0, args));
  const env = keepCniEnv(keptEntries(bytes, args));
  return { argv, env, truncated: !exec.whole || exec.blockBytes > EXEC_BLOCK_CAP_BYTES };
}

const CNI_ = Buffer.from('CNI_');
const TRACE = Buffer.from('TRACE');

/**
 * The env entries from `from` on that may be kept (their name starts with
 * CNI_ or TRACE; keepCniEnv decides): the others never become strings. A
 * runtime in a pod hands plugins hundreds of variables.
 */
function* keptEntries(buf: Buffer, from: number): Generator<string> {
  let start = from;
  while (start < buf.length) {
    let end = buf.indexOf(0, start);
    if (end < 0) end = buf.length;
    if (startsWith(buf, start, end, CNI_) || startsWith(buf, start, end, TRACE)) yield buf.toString('utf8', start, end);
    start = end + 1;
  }
}

function startsWith(buf: Buffer, start: number, end: number, prefix: Buffer): boolean {
  return end - start >= prefix.length && buf.compare(prefix, 0, prefix.length, start, start + prefix.length) === 0;
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
