/**
 * One version of one file of a CNI conf dir, as the conf dir watcher
 * publishes it: the bytes after redaction (the original bytes are never
 * kept), their hash, the file's mtime, and what libcni would make of it.
 */

import { createHash } from 'node:crypto';
import { parseConf } from './conf-file.js';
import type { ConfDirFile } from './conf-selection.js';

export interface ConfFileVersion {
  readonly path: string;
  readonly dir: string;
  /** `file`: its bytes are here; the others say why not. */
  readonly kind: 'file' | 'symlink' | 'other' | 'too-large' | 'unreadable';
  /** The bytes after redaction; null when not read. */
  readonly bytes: Buffer | null;
  /** sha256 of `bytes` (the file's own hash when nothing was redacted); null when not read. */
  readonly sha256: string | null;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  readonly network: string | null;
  readonly cniVersion: string | null;
  /** Why libcni would refuse it (with line and column for JSON errors); null when it loads. */
  readonly parseError: string | null;
  /** Plugin types it needs. */
  readonly types: readonly string[];
  readonly linkTarget: string | null;
  /** JSON pointers of values redacted before storing. */
  readonly redactions: readonly string[];
}

export type ConfRedact = (bytes: Buffer) => { readonly bytes: Buffer; readonly pointers: readonly string[] } | null;

export function confFileVersion(dir: string, f: ConfDirFile, redact?: ConfRedact): ConfFileVersion {
  const base = { path: f.path, dir, sizeBytes: f.size, mtimeMs: f.mtimeMs, linkTarget: f.linkTarget ?? null };
  const none = { bytes: null, sha256: null, network: null, cniVersion: null, types: [], redactions: [] };
  if (f.kind === 'symlink') return { ...base, ...none, kind: 'symlink', parseError: 'a symbolic link: cnirec does not follow it' };
  if (f.kind !== 'file' || f.read === null) return { ...base, ...none, kind: 'other', parseError: 'not a regular file' };
  if (!f.read.ok) return { ...base, ...none, kind: f.read.why, parseError: f.read.detail };
  // What libcni makes of the file is decided on its real bytes; only redacted bytes are kept.
  const parsed = parseConf(f.name, f.read.bytes);
  const red = redact?.(f.read.bytes) ?? null;
  const bytes = red?.bytes ?? f.read.bytes;
  return {
    ...base,
    kind: 'file',
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    network: parsed.ok ? (parsed.name ?? null) : null,
    cniVersion: parsed.ok ? parsed.cniVersion : null,
    parseError: parsed.ok ? null : parsed.error,
    types: parsed.ok ? [...new Set(parsed.plugins.map((p) => p.type))] : [],
    redactions: red?.pointers ?? [],
  };
}

/** Two looks at a file found the same version. */
export function sameVersion(a: ConfFileVersion, b: ConfFileVersion): boolean {
  return a.kind === b.kind && a.sha256 === b.sha256 && a.linkTarget === b.linkTarget && (a.sha256 !== null || a.sizeBytes === b.sizeBytes);
}
