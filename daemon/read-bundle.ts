/**
 * Takes a bundle apart into a private directory, checking it as it goes:
 * the first file must be a cnirec manifest of a format this build reads,
 * and every other file one it lists, with the size and sha256 it lists.
 * Anything else — not gzip, cut short, damaged, a tar of something else, a
 * file changed or added after the fact — is refused with one sentence.
 */

import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { readTarGz, TarFormatError, type TarEntry } from '../lib/index.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION, bundleManifestSchema, MANIFEST_FILE, RECORD_FILE, type BundleManifest } from './bundle-manifest.js';
import { isSafeName } from './bundle-stage.js';
import { BundleError } from './make-bundle.js';

/** A manifest is a few KiB per thousand node files; a bigger one is not ours. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

export interface OpenedBundle {
  /** The bundle file as given. */
  readonly file: string;
  readonly dir: string;
  readonly manifest: BundleManifest;
  readonly recordFile: string;
  cleanup(): Promise<void>;
}

export async function readBundle(file: string, tmpDir = os.tmpdir()): Promise<OpenedBundle> {
  const size = await stat(file).then(
    (s) => (s.isFile() ? s.size : -1),
    () => null,
  );
  if (size === null) throw new BundleError(`There is no file ${file}.`);
  if (size < 0) throw new BundleError(`${file} is not a file.`);
  const dir = await mkdtemp(path.join(tmpDir, 'cnirec-open-'));
  try {
    const manifest = await extract(file, dir);
    return { file, dir, manifest, recordFile: path.join(dir, RECORD_FILE), cleanup: () => rm(dir, { recursive: true, force: true }) };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof TarFormatError) throw new BundleError(tarMessage(file, err));
    throw err;
  }
}

function tarMessage(file: string, err: TarFormatError): string {
  switch (err.kind) {
    case 'not-gzip':
    case 'not-tar':
      return `${file} is not a cnirec bundle (${err.message}).`;
    case 'truncated':
      return `${file} is cut short (${err.message.replace(/^the archive /, 'it ')}): copy or download it again.`;
    default:
      return `${file} is damaged (${err.message}): copy or download it again.`;
  }
}

async function extract(file: string, dir: string): Promise<BundleManifest> {
  let manifest: BundleManifest | null = null;
  const expected = new Map<string, { bytes: number; sha256: string }>();
  for await (const entry of readTarGz(file)) {
    if (manifest === null) {
      manifest = await readManifest(file, entry);
      for (const f of manifest.files) expected.set(f.path, f);
      continue;
    }
    if (entry.type === 'directory') continue;
    const want = expected.get(entry.name);
    if (entry.type !== 'file' || !want || !isSafeName(entry.name)) throw new BundleError(`${file} holds ${entry.name}, which its manifest does not list: it is not a cnirec bundle as made, or it was changed.`);
    expected.delete(entry.name);
    const got = await writeEntry(entry, path.join(dir, ...entry.name.split('/')));
    if (got.bytes !== want.bytes || got.sha256 !== want.sha256) throw new BundleError(`${file} is damaged: ${entry.name} is not the file its manifest lists (size or sha256 differ); copy or download it again.`);
  }
  if (manifest === null) throw new BundleError(`${file} is not a cnirec bundle (an empty archive).`);
  if (expected.size > 0) throw new BundleError(`${file} is cut short: ${[...expected.keys()].slice(0, 3).join(', ')} listed in its manifest ${expected.size === 1 ? 'is' : 'are'} missing; copy or download it again.`);
  return manifest;
}

/** The manifest alone (the archive's first file), without taking the rest apart; null when the file holds none. */
export async function readBundleManifest(file: string): Promise<BundleManifest | null> {
  try {
    for await (const entry of readTarGz(file)) return await readManifest(file, entry);
  } catch {
    // not a bundle, or not one this build reads: the caller says what it knows without it
  }
  return null;
}

async function readManifest(file: string, entry: TarEntry): Promise<BundleManifest> {
  if (entry.name !== MANIFEST_FILE || entry.type !== 'file' || entry.size > MAX_MANIFEST_BYTES) throw new BundleError(`${file} is not a cnirec bundle (it does not start with a cnirec manifest.json).`);
  const parts: Buffer[] = [];
  for await (const chunk of entry.body) parts.push(chunk);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    throw new BundleError(`${file} is not a cnirec bundle (its manifest.json is not JSON).`);
  }
  const head = json as { format?: unknown; formatVersion?: unknown; cnirec?: unknown };
  if (head?.format !== BUNDLE_FORMAT) throw new BundleError(`${file} is not a cnirec bundle (its manifest.json is not a cnirec manifest).`);
  if (typeof head.formatVersion === 'number' && head.formatVersion > BUNDLE_FORMAT_VERSION) {
    throw new BundleError(`${file} was made by cnirec ${String(head.cnirec)} in bundle format ${head.formatVersion}; this cnirec reads format ${BUNDLE_FORMAT_VERSION}: open it with cnirec ${String(head.cnirec)} or newer.`);
  }
  const parsed = bundleManifestSchema.safeParse(json);
  if (!parsed.success) throw new BundleError(`${file} has a manifest.json this cnirec cannot read (${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}).`);
  if (!parsed.data.files.some((f) => f.path === RECORD_FILE)) throw new BundleError(`${file} is a cnirec bundle without its record (${RECORD_FILE}).`);
  return parsed.data;
}

async function writeEntry(entry: TarEntry, to: string): Promise<{ bytes: number; sha256: string }> {
  await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  const out = createWriteStream(to, { mode: 0o600, flags: 'wx' });
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of entry.body) {
      hash.update(chunk);
      bytes += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'close');
  }
  return { bytes, sha256: hash.digest('hex') };
}
