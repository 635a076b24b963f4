/**
 * Command-line parsing shared by the commands: node's parseArgs with its
 * errors turned into usage errors (exit 2, with the command's usage), and
 * the flags that mean one thing everywhere: `-o wide|json` (`--json`),
 * `--limit N`, `--all` (every page, however many), `--pod NS/NAME`.
 */

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { HelpRequested, UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs, strict, its complaints as a UsageError carrying `usage`. */
export function parseCommand<O extends Options>(args: string[], options: O, usage: string, positionals = false) {
  if (args.includes('--help') || args.includes('-h')) throw new HelpRequested(usage);
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals });
  } catch (err) {
    throw new UsageError((err as Error).message, usage);
  }
}

/** `-o`/`--output` and `--json`. */
export const OUTPUT_FLAGS = {
  output: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
} as const;

export type OutputMode = 'text' | 'wide' | 'json';

export function outputMode(values: { output?: string | undefined; json?: boolean | undefined }, usage: string): OutputMode {
  if (values.json) return 'json';
  if (values.output === undefined) return 'text';
  if (values.output === 'wide' || values.output === 'json') return values.output;
  throw new UsageError(`-o takes "wide" or "json", not "${values.output}"`, usage);
}

/** A whole number in [min, max], or a usage error naming the flag. */
export function intFlag(value: string | undefined, flag: string, { min, max, usage }: { min: number; max: number; usage: string }): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, not "${value}"`, usage);
  return n;
}

/** A non-negative number (milliseconds may have a fraction). */
export function numberFlag(value: string | undefined, flag: string, usage: string): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(?:\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) throw new UsageError(`${flag} takes a number of milliseconds, not "${value}"`, usage);
  return n;
}

/** `NAMESPACE/NAME` exactly (or just `NAME` where `allowBare`): anything else is a usage error, never silently cut. */
export function podFlag(value: string, flag: string, usage: string, allowBare = false): { namespace: string | undefined; name: string } {
  const parts = value.split('/');
  if (parts.length === 2 && parts[0] && parts[1]) return { namespace: parts[0], name: parts[1] };
  if (allowBare && parts.length === 1 && parts[0]) return { namespace: undefined, name: parts[0] };
  throw new UsageError(`${flag} takes NAMESPACE/NAME${allowBare ? ' (or NAME)' : ''}, not "${value}"`, usage);
}
