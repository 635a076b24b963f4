/**
 * A .tar.gz of regular files, written and read as streams (a database of
 * hundreds of MiB never sits in memory). Written by hand over node:zlib rather
 * than with a tar package: an archive cnirec makes holds a flat list of
 * regular files, and the reader only has to take such archives back into a
 * private directory, refusing everything else (links, devices, names that
 * climb out of it) instead of reproducing it as a general extractor would.
 */

import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { BLOCK, END_OF_ARCHIVE, fileHeader, paddingFor, parseHeader, parsePax, TarFormatError, type TarHeader } from './tar-header.js';

export { TarFormatError } from './tar-header.js';

export interface TarSource {
  /** The name inside the archive ("record.db", "node/doctor.json"). */
  readonly name: string;
  /** A file on disk, streamed; or the bytes themselves. */
  readonly file?: string;
  readonly bytes?: Buffer;
  readonly size: number;
  readonly mtimeMs: number;
}

async function* archive(sources: readonly TarSource[]): AsyncGenerator<Buffer> {
  for (const s of sources) {
    yield fileHeader(s.name, s.size, s.mtimeMs);
    let written = 0;
    if (s.bytes) {
      written = s.bytes.length;
      yield s.bytes;
    } else if (s.file) {
      for await (const chunk of createReadStream(s.file)) {
        written += (chunk as Buffer).length;
        yield chunk as Buffer;
      }
    }
    if (written !== s.size) throw new Error(`tar: ${s.name} changed while it was archived (${written} bytes, ${s.size} expected)`);
    yield Buffer.alloc(paddingFor(s.size));
  }
  yield END_OF_ARCHIVE;
}

/** Writes `sources`, in order, as one gzip'd tar archive to `file`. */
export async function writeTarGz(file: string, sources: readonly TarSource[], level = 6): Promise<void> {
  await pipeline(Readable.from(archive(sources)), createGzip({ level }), createWriteStream(file, { mode: 0o600 }));
}

export interface TarEntry extends TarHeader {
  /** The entry's bytes, to be consumed (or left: they are skipped) before the next entry comes. */
  readonly body: AsyncIterable<Buffer>;
}

/** Pulls exact byte counts out of a stream of chunks. */
class ByteReader {
  private pending: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.length < n && !this.done) {
      const next = await this.chunks.next();
      if (next.done) this.done = true;
      else {
        this.pending.push(next.value);
        this.length += next.value.length;
      }
    }
    return this.length >= n;
  }

  /** Exactly n bytes, or null at the end of the stream (fewer were left). */
  async take(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) return null;
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = all.length > n ? [all.subarray(n)] : [];
    this.length -= n;
    return all.subarray(0, n);
  }

  /** Up to `max` bytes (at least one), or null at the end of the stream. */
  async some(max: number): Promise<Buffer | null> {
    if (!(await this.fill(1))) return null;
    const first = this.pending[0]!;
    const out = first.length > max ? first.subarray(0, max) : first;
    if (first.length > max) this.pending[0] = first.subarray(max);
    else this.pending.shift();
    this.length -= out.length;
    return out;
  }
}

const truncated = () => new TarFormatError('truncated', 'the archive ends in the middle of a file: it was cut short (an interrupted download or copy)');

/**
 * The entries of a gzip'd tar file, in order. Throws TarFormatError when the
 * file is not gzip, is damaged, or ends before the archive does.
 */
export async function* readTarGz(file: string): AsyncGenerator<TarEntry> {
  const head = await readHead(file, 2);
  if (head.length < 2 || head[0] !== 0x1f || head[1] !== 0x8b) throw new TarFormatError('not-gzip', 'it is not a gzip file');
  const gunzip = createReadStream(file).pipe(createGunzip());
  const chunks = gunzipChunks(gunzip);
  const reader = new ByteReader(chunks[Symbol.asyncIterator]());
  let pax: { path?: string; size?: number } = {};
  for (;;) {
    const block = await reader.take(BLOCK);
    if (block === null) throw truncated();
    const header = parseHeader(block);
    if (header === null) return; // the end-of-archive block (what may follow it is padding)
    const size = pax.size ?? header.size;
    const name = pax.path ?? header.name;
    pax = {};
    if (header.type === 'pax' || header.type === 'global-pax') {
      const body = size === 0 ? Buffer.alloc(0) : await reader.take(size);
      if (body === null || (await reader.take(paddingFor(size))) === null) throw truncated();
      if (header.type === 'pax') pax = parsePax(body);
      continue;
    }
    let left = size;
    const body = (async function* () {
      while (left > 0) {
        const chunk = await reader.some(left);
        if (chunk === null) throw truncated();
        left -= chunk.length;
        yield chunk;
      }
    })();
    yield { ...header, name, size, body };
    // Whatever the consumer did not read (or stopped reading) is skipped.
    while (left > 0) {
      const chunk = await reader.some(left);
      if (chunk === null) throw truncated();
      left -= chunk.length;
    }
    if ((await reader.take(paddingFor(size))) === null) throw truncated();
  }
}

/** zlib's errors, said as what they mean for the file. */
async function* gunzipChunks(gunzip: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of gunzip) yield chunk;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'Z_BUF_ERROR' || /unexpected end of file/i.test((err as Error).message)) throw truncated();
    throw new TarFormatError('corrupt', `its compressed data is damaged (${(err as Error).message})`);
  }
}

async function readHead(file: string, n: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  for await (const chunk of createReadStream(file, { start: 0, end: n - 1 })) {
    parts.push(chunk as Buffer);
    got += (chunk as Buffer).length;
  }
  return Buffer.concat(parts, got);
}
