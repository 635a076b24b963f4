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
  const env = keepCniEnv(splitNul(bytes.subarray(args)));
  return { argv, env, truncated: !exec.whole || exec.blockBytes > EXEC_BLOCK_CAP_BYTES };
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
