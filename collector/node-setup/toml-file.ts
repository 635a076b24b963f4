/**
 * Runtime config files are TOML (containerd, CRI-O, containers.conf): parsed
 * with smol-toml, a maintained TOML 1.0 parser. A file that does not parse
 * is a problem of its own (the runtime refuses to start on it, or ignores
 * it), named with its line and column.
 */

import { parse, TomlError } from 'smol-toml';
import type { DoctorProblem } from './types.js';

/** One runtime config file as read from disk. */
export interface ConfigText {
  readonly path: string;
  readonly text: string;
}

export type TomlTable = { readonly [key: string]: unknown };

export type ParsedToml = { readonly ok: true; readonly table: TomlTable } | { readonly ok: false; readonly problem: DoctorProblem };

export function parseToml(file: ConfigText, runtime: string): ParsedToml {
  try {
    return { ok: true, table: parse(file.text) };
  } catch (err) {
    const first = (err as Error).message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') ?? 'invalid TOML';
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : '';
    return {
      ok: false,
      problem: {
        code: 'runtime-config-invalid',
        severity: 'error',
        path: file.path,
        message: `${file.path} is not valid TOML${where} (${first}): ${runtime} refuses to start with it, so the CNI paths it names are unknown; fix the file and restart ${runtime}`,
      },
    };
  }
}

/** `table.a.b.c`, or undefined when any step is missing or not a table. */
export function dig(table: TomlTable, ...keys: string[]): unknown {
  let at: unknown = table;
  for (const k of keys) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as TomlTable)[k];
  }
  return at;
}

export function stringAt(table: TomlTable, ...keys: string[]): string | undefined {
  const v = dig(table, ...keys);
  return typeof v === 'string' ? v : undefined;
}

export function numberAt(table: TomlTable, ...keys: string[]): number | undefined {
  const v = dig(table, ...keys);
  if (typeof v === 'number') return v;
  return typeof v === 'bigint' ? Number(v) : undefined;
}

export function stringsAt(table: TomlTable, ...keys: string[]): string[] | undefined {
  const v = dig(table, ...keys);
  return Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined;
}

export function tableAt(table: TomlTable, ...keys: string[]): TomlTable | undefined {
  const v = dig(table, ...keys);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as TomlTable) : undefined;
}

/** Directories as runtimes compare them: without the trailing slash their configs often carry. */
export function cleanDir(dir: string): string {
  return dir.length > 1 ? dir.replace(/\/+$/, '') : dir;
}
