/**
 * Which cnirec this is: the version of the package it was installed from,
 * found by walking up from this module to cnirec's package.json (the same
 * from the sources and from dist/). For /metrics (cnirec_build_info) and
 * `cnirec version`.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  readonly version: string;
}

let cached: BuildInfo | null = null;

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'cnirec' && typeof pkg.version === 'string') return (cached = { version: pkg.version });
    } catch {
      // Not here: one level up.
    }
    const up = path.dirname(dir);
    if (up === dir) return (cached = { version: 'unknown' });
    dir = up;
  }
}
