import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTarGz, TarFormatError, writeTarGz, type TarSource } from '../../lib/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cnirec-tar-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(file: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for await (const entry of readTarGz(file)) {
    if (entry.type !== 'file') continue;
    const parts: Buffer[] = [];
    for await (const chunk of entry.body) parts.push(chunk);
    out.set(entry.name, Buffer.concat(parts));
  }
  return out;
}

const longName = `node/files/${'a-very-long-directory-name/'.repeat(8)}10-some.conflist`;

function sources(): TarSource[] {
  const big = Buffer.alloc(200_000, 7);
  big.write('start');
  const bigFile = path.join(dir, 'big.bin');
  writeFileSync(bigFile, big);
  return [
    { name: 'manifest.json', bytes: Buffer.from('{"a":1}'), size: 7, mtimeMs: Date.UTC(2025, 0, 1) },
    { name: 'record.db', file: bigFile, size: big.length, mtimeMs: Date.UTC(2025, 0, 1) },
    { name: 'empty.txt', bytes: Buffer.alloc(0), size: 0, mtimeMs: Date.UTC(2025, 0, 1) },
    { name: longName, bytes: Buffer.from('x'.repeat(513)), size: 513, mtimeMs: Date.UTC(2025, 0, 1) },
  ];
}

describe('tar.gz', () => {
  it('reads back what it wrote, names longer than ustar holds included', async () => {
    const file = path.join(dir, 'a.tar.gz');
    await writeTarGz(file, sources());
    const got = await readAll(file);
    expect([...got.keys()]).toEqual(['manifest.json', 'record.db', 'empty.txt', longName]);
    expect(got.get('record.db')!.equals(readFileSync(path.join(dir, 'big.bin')))).toBe(true);
    expect(got.get(longName)!.toString()).toBe('x'.repeat(513));
  });

  it('writes archives GNU tar lists and extracts byte for byte', async () => {
    const file = path.join(dir, 'a.tar.gz');
    await writeTarGz(file, sources());
    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(['manifest.json', 'record.db', 'empty.txt', longName]);
    const out = path.join(dir, 'x');
    mkdirSync(out);
    execFileSync('tar', ['-xzf', file, '-C', out]);
    expect(readFileSync(path.join(out, 'record.db')).equals(readFileSync(path.join(dir, 'big.bin')))).toBe(true);
    expect(readFileSync(path.join(out, longName), 'utf8')).toBe('x'.repeat(513));
  });

  it('reads what GNU tar wrote, in pax format too', async () => {
    const src = path.join(dir, 'src');
    mkdirSync(path.join(src, 'sub'), { recursive: true });
    writeFileSync(path.join(src, 'sub', 'f.txt'), 'hello');
    for (const format of ['ustar', 'pax']) {
      const file = path.join(dir, `${format}.tar.gz`);
      execFileSync('tar', [`--format=${format}`, '-czf', file, '-C', src, 'sub']);
      const got = await readAll(file);
      expect(got.get('sub/f.txt')?.toString()).toBe('hello');
    }
  });

  it('says a file that is not gzip, a cut one and a damaged one apart', async () => {
    const plain = path.join(dir, 'plain.txt');
    writeFileSync(plain, 'hello, not an archive');
    await expect(readAll(plain)).rejects.toMatchObject({ kind: 'not-gzip' });

    const file = path.join(dir, 'a.tar.gz');
    await writeTarGz(file, sources());
    const cut = path.join(dir, 'cut.tar.gz');
    writeFileSync(cut, readFileSync(file));
    truncateSync(cut, Math.floor(statSync(file).size / 2));
    await expect(readAll(cut)).rejects.toMatchObject({ kind: 'truncated' });

    const damaged = readFileSync(file);
    for (let i = 100; i < 400; i++) damaged[i] = damaged[i]! ^ 0x5a;
    const bad = path.join(dir, 'bad.tar.gz');
    writeFileSync(bad, damaged);
    const err = await readAll(bad).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TarFormatError);
    expect(['corrupt', 'not-tar', 'truncated']).toContain((err as TarFormatError).kind);
  });

  it('refuses a gzip file that holds no tar archive', async () => {
    const file = path.join(dir, 'x.gz');
    writeFileSync(path.join(dir, 'x'), 'just some text that is longer than nothing at all'.repeat(20));
    execFileSync('gzip', ['-k', path.join(dir, 'x')]);
    await expect(readAll(file)).rejects.toMatchObject({ kind: 'not-tar' });
  });
});
