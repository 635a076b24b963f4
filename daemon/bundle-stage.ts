/**
 * Where a bundle's files are put together before they are archived: a
 * private directory, each file with what it is; the list with sizes and
 * sha256 becomes the manifest.
 */

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BundleFile } from './bundle-manifest.js';

export interface Stage {
  readonly dir: string;
  /** Where a file named `name` (a relative path with /) is written. */
  pathOf(name: string): string;
  add(name: string, content: Buffer | string, what: string): Promise<void>;
  addJson(name: string, value: unknown, what: string): Promise<void>;
  /** Takes a file made elsewhere in the same file system (moved, not copied). */
  adopt(name: string, file: string, what: string): Promise<void>;
  /** Takes a copy of a file. */
  copyIn(name: string, file: string, what: string): Promise<void>;
  /** Every file added, in order, with its size and sha256. */
  files(): Promise<BundleFile[]>;
}

/** A name is relative, with no "." or ".." segment: nothing it names can land outside the bundle's directory. */
export function isSafeName(name: string): boolean {
  return name.length > 0 && name.length <= 4096 && !name.startsWith('/') && name.split('/').every((s) => s !== '' && s !== '.' && s !== '..') && !name.includes('\0');
}

export function createStage(dir: string): Stage {
  const added = new Map<string, string>();
  const pathOf = (name: string) => {
    if (!isSafeName(name)) throw new Error(`bundle: unsafe file name ${name}`);
    return path.join(dir, ...name.split('/'));
  };
  const prepare = async (name: string, what: string) => {
    const to = pathOf(name);
    await mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
    added.set(name, what);
    return to;
  };
  return {
    dir,
    pathOf,
    async add(name, content, what) {
      await writeFile(await prepare(name, what), content, { mode: 0o600 });
    },
    async addJson(name, value, what) {
      await writeFile(await prepare(name, what), `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    },
    async adopt(name, file, what) {
      await rename(file, await prepare(name, what));
    },
    async copyIn(name, file, what) {
      await copyFile(file, await prepare(name, what));
    },
    async files() {
      const out: BundleFile[] = [];
      for (const [name, what] of added) {
        const file = pathOf(name);
        out.push({ path: name, bytes: (await stat(file)).size, sha256: await sha256Of(file), what });
      }
      return out;
    },
  };
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
