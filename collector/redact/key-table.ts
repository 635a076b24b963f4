/**
 * Key names seen in payload bytes, with their decision, found again without
 * decoding: the same few dozen keys (`cniVersion`, `name`, `type`, `ipam`…)
 * come back in every payload, and building a string per key to look it up
 * cost the scanner more than everything else together. A 32-bit FNV-1a hash
 * of the raw bytes picks the bucket; the bytes are then compared, so a hash
 * collision can never make a secret key look like a known harmless one.
 */

export interface KnownKey {
  /** The decoded key, for JSON pointers. */
  readonly key: string;
  readonly secret: boolean;
}

interface Entry extends KnownKey {
  readonly raw: Uint8Array;
}

/** Bounds memory when a hostile payload brings millions of distinct keys: the table starts over. */
const MAX_ENTRIES = 4096;

export class KeyTable {
  private readonly buckets = new Map<number, Entry[]>();
  private size = 0;

  constructor(
    private readonly decode: (b: Buffer, start: number, stop: number) => string,
    private readonly isSecret: (key: string) => boolean,
  ) {}

  /** The key whose raw (still escaped) bytes are b[start, stop). */
  lookup(b: Buffer, start: number, stop: number): KnownKey {
    let h = 0x811c9dc5;
    for (let j = start; j < stop; j++) h = Math.imul(h ^ b[j]!, 0x01000193);
    const bucket = this.buckets.get(h);
    if (bucket !== undefined) {
      for (const e of bucket) if (sameBytes(e.raw, b, start, stop)) return e;
    }
    const key = this.decode(b, start, stop);
    const entry: Entry = { key, secret: this.isSecret(key), raw: Uint8Array.prototype.slice.call(b, start, stop) };
    if (this.size >= MAX_ENTRIES) {
      this.buckets.clear();
      this.size = 0;
    }
    const list = this.buckets.get(h);
    if (list) list.push(entry);
    else this.buckets.set(h, [entry]);
    this.size++;
    return entry;
  }
}

function sameBytes(raw: Uint8Array, b: Buffer, start: number, stop: number): boolean {
  if (raw.length !== stop - start) return false;
  for (let k = 0; k < raw.length; k++) if (raw[k] !== b[start + k]) return false;
  return true;
}
