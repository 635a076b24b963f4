/**
 * The POSIX tar (ustar) header, and the pax extended header for what ustar
 * cannot hold (a name longer than its 100 + 155 bytes, a size of 8 GiB or
 * more). Only what a flat archive of regular files needs: cnirec writes and
 * reads its own archives, and `tar xzf` reads them too.
 */

export const BLOCK = 512;

export type TarType = 'file' | 'directory' | 'pax' | 'global-pax' | 'other';

export interface TarHeader {
  readonly name: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly mode: number;
  readonly type: TarType;
}

/** 11 octal digits: the largest size a ustar header holds. */
const MAX_OCTAL_SIZE = 0o77777777777;

/** Pads a body of `size` bytes to the next block. */
export function paddingFor(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function writeString(block: Buffer, offset: number, length: number, value: string): void {
  block.write(value, offset, Math.min(length, Buffer.byteLength(value)), 'utf8');
}

function writeOctal(block: Buffer, offset: number, length: number, value: number): void {
  // length-1 digits, then NUL, as GNU and BSD tar write them.
  writeString(block, offset, length - 1, Math.floor(value).toString(8).padStart(length - 1, '0'));
}

/** The ustar header of a regular file (or of a pax record, typeflag 'x'); `name` must fit (see splitName). */
function ustarHeader(name: string, size: number, mtimeMs: number, mode: number, typeflag: '0' | 'x'): Buffer {
  const block = Buffer.alloc(BLOCK);
  const split = splitName(name);
  if (split === null) throw new Error(`tar: the name ${name} does not fit a ustar header`);
  writeString(block, 0, 100, split.name);
  writeOctal(block, 100, 8, mode);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, Math.floor(mtimeMs / 1000));
  block.fill(0x20, 148, 156);
  block.write(typeflag, 156, 'ascii');
  block.write('ustar\u000000', 257, 'binary');
  writeString(block, 265, 32, 'root');
  writeString(block, 297, 32, 'root');
  writeString(block, 345, 155, split.prefix);
  writeString(block, 148, 7, checksum(block).toString(8).padStart(6, '0') + '\u0000');
  return block;
}

/** ustar keeps a long name as prefix + "/" + name (at most 155 and 100 bytes); null when no split fits. */
export function splitName(path: string): { prefix: string; name: string } | null {
  if (Buffer.byteLength(path) <= 100) return { prefix: '', name: path };
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name.length > 0) return { prefix, name };
  }
  return null;
}

function checksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

/** One pax record: "<length> <key>=<value>\n", where the length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

/** The header blocks of a regular file: a pax header first when ustar cannot say its name or size. */
export function fileHeader(name: string, size: number, mtimeMs: number, mode = 0o644): Buffer {
  const needsPax = splitName(name) === null || size > MAX_OCTAL_SIZE;
  if (!needsPax) return ustarHeader(name, size, mtimeMs, mode, '0');
  const records = Buffer.from(paxRecord('path', name) + (size > MAX_OCTAL_SIZE ? paxRecord('size', String(size)) : ''), 'utf8');
  const short = `PaxHeaders/${name.split('/').pop()!.slice(0, 80)}`;
  return Buffer.concat([
    ustarHeader(short, records.length, mtimeMs, 0o644, 'x'),
    records,
    Buffer.alloc(paddingFor(records.length)),
    ustarHeader(name.split('/').pop()!.slice(0, 100), Math.min(size, MAX_OCTAL_SIZE), mtimeMs, mode, '0'),
  ]);
}

/** Two zero blocks end an archive. */
export const END_OF_ARCHIVE = Buffer.alloc(2 * BLOCK);

export class TarFormatError extends Error {
  override readonly name = 'TarFormatError';
  constructor(
    readonly kind: 'not-gzip' | 'corrupt' | 'truncated' | 'not-tar',
    message: string,
  ) {
    super(message);
  }
}

function readString(block: Buffer, offset: number, length: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

function readOctal(block: Buffer, offset: number, length: number): number {
  const text = readString(block, offset, length).trim();
  if (!/^[0-7]*$/.test(text)) throw new TarFormatError('not-tar', 'a tar header holds a number that is not octal');
  return text === '' ? 0 : parseInt(text, 8);
}

/** A header block → its fields; null for a zero block (the end of the archive). */
export function parseHeader(block: Buffer): TarHeader | null {
  if (block.every((b) => b === 0)) return null;
  const stored = readOctal(block, 148, 8);
  if (stored !== checksum(block)) throw new TarFormatError('not-tar', 'a tar header has a wrong checksum');
  const prefix = block.toString('binary', 257, 262) === 'ustar' ? readString(block, 345, 155) : '';
  const name = readString(block, 0, 100);
  const flag = String.fromCharCode(block[156]!);
  const type: TarType = flag === '0' || flag === '\u0000' || flag === '7' ? 'file' : flag === '5' ? 'directory' : flag === 'x' ? 'pax' : flag === 'g' ? 'global-pax' : 'other';
  return { name: prefix ? `${prefix}/${name}` : name, size: readOctal(block, 124, 12), mtimeMs: readOctal(block, 136, 12) * 1000, mode: readOctal(block, 100, 8), type };
}

/** The path and size a pax header's records set (other keys are ignored). */
export function parsePax(body: Buffer): { path?: string; size?: number } {
  const out: { path?: string; size?: number } = {};
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number(body.toString('ascii', at, space));
    if (!Number.isSafeInteger(length) || length <= 0 || at + length > body.length) throw new TarFormatError('not-tar', 'a pax header record is malformed');
    const record = body.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    const key = record.slice(0, eq);
    const value = record.slice(eq + 1);
    if (key === 'path') out.path = value;
    else if (key === 'size' && /^\d+$/.test(value)) out.size = Number(value);
    at += length;
  }
  return out;
}
