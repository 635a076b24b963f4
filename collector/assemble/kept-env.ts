/**
 * The kept env entries of one exec (CNI_*, TRACEPARENT, TRACESTATE), as the
 * tracer sends them apart from the argv+env block: an E line says how many
 * the env holds, then the first ENV_SLOTS come whole (each up to
 * ENV_ENTRY_CAP_BYTES), an S line with its length and V chunks each. They
 * come from wherever they sit in the env; the block holds its first 16 KiB
 * only.
 */

import { ChunkedBuffer } from './chunked-buffer.js';
import { ENV_ENTRY_CAP_BYTES, ENV_SLOTS } from '../../bpf/index.js';
import { keepCniEnv } from './cni-env.js';

export class KeptEnvEntries {
  private readonly entries = new Map<number, ChunkedBuffer>();

  constructor(
    /** Kept entries the tracer found in the env (the first ENV_SLOTS are sent). */
    readonly found: number,
  ) {}

  /** An S line: the slot-th entry is `len` bytes long. */
  addEntry(slot: number, len: number): void {
    if (slot < ENV_SLOTS && !this.entries.has(slot)) this.entries.set(slot, new ChunkedBuffer(len, ENV_ENTRY_CAP_BYTES));
  }

  /** A V line. Chunks of a slot whose S line was lost have nothing to go to. */
  addChunk(slot: number, off: number, data: Buffer): void {
    this.entries.get(slot)?.add(off, data);
  }

  /** Every announced entry is in, each with all its chunks. */
  complete(): boolean {
    if (this.entries.size < Math.min(this.found, ENV_SLOTS)) return false;
    for (const entry of this.entries.values()) if (!entry.complete()) return false;
    return true;
  }

  /** An entry is cut or missing: longer than the cap, past the slots, or its lines were lost. */
  truncated(): boolean {
    if (this.found > ENV_SLOTS || !this.complete()) return true;
    for (const entry of this.entries.values()) if (entry.cut) return true;
    return false;
  }

  /** The entries as `KEY=value` pairs, kept names only (in env order: a name twice keeps its last value). */
  env(): Record<string, string> {
    const slots = [...this.entries.keys()].sort((a, b) => a - b);
    return keepCniEnv(slots.map((slot) => this.entries.get(slot)!.bytes().toString('utf8')));
  }
}
