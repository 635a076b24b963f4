/**
 * What --max-size needs to know of a snapshot: how well its payloads compress (a sample), and from when
 * payloads must be kept for a given number of bytes of them, oldest first, to be left out.
 */

import { openRecordReadOnly, pacer } from './snapshot.js';

/**
 * The start time from which payloads must be kept for about `dropBytes` of
 * them (oldest first) to be left out of the snapshot in `file`; null when
 * leaving them all out is not enough.
 */
export async function payloadCutFor(file: string, dropBytes: number): Promise<number | null> {
  const pace = pacer(15);
  const db = openRecordReadOnly(file);
  try {
    const rows = db
      .prepare<[], [number, number]>(
        `SELECT started_at_us, length(stdin) + length(stdout) + length(stderr) FROM main.calls
         UNION ALL SELECT started_at_us, length(stdout) + length(stderr) FROM main.helpers
         ORDER BY 1`,
      )
      .raw(true)
      .iterate() as IterableIterator<[number, number]>;
    let dropped = 0;
    let n = 0;
    for (const [at, bytes] of rows) {
      if (dropped >= dropBytes) return at;
      dropped += bytes;
      if (++n % 256 === 0) await pace();
    }
    return null;
  } finally {
    db.close();
  }
}

/**
 * About `limit` bytes of the payloads in a snapshot, taken evenly across its rows: how well they compress
 * says how many of them a bundle must leave out to lose a given number of compressed bytes.
 */
export async function samplePayloads(file: string, limit: number): Promise<Buffer> {
  const pace = pacer(15);
  const db = openRecordReadOnly(file);
  try {
    const total = db.prepare<[], { n: number | null }>('SELECT sum(length(stdin) + length(stdout) + length(stderr)) AS n FROM main.calls').get()!.n ?? 0;
    const every = Math.max(1, Math.ceil(total / limit));
    const parts: Buffer[] = [];
    let seen = 0;
    let taken = 0;
    for (const [stdin, stdout, stderr] of db.prepare('SELECT stdin, stdout, stderr FROM main.calls').raw(true).iterate() as IterableIterator<Buffer[]>) {
      if (seen % 256 === 0) await pace();
      if (seen++ % every !== 0 && total > limit) continue;
      for (const b of [stdin!, stdout!, stderr!]) parts.push(b);
      taken += stdin!.length + stdout!.length + stderr!.length;
      if (taken >= limit) break;
    }
    return Buffer.concat(parts);
  } finally {
    db.close();
  }
}
