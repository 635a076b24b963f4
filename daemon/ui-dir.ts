/**
 * Where the built web view is: dist/ui/ of the cnirec package this module
 * belongs to, found by walking up to its package.json (the same from the
 * sources and from dist/). Null when it was not built (`npm run build`).
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function findUiDir(from: string = path.dirname(fileURLToPath(import.meta.url))): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (isCnirecRoot(dir)) {
      const ui = path.join(dir, 'dist', 'ui');
      return existsSync(path.join(ui, 'index.html')) ? ui : null;
    }
    if (path.dirname(dir) === dir) return null;
  }
}

function isCnirecRoot(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'cnirec';
  } catch {
    return false;
  }
}
