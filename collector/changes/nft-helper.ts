/**
 * Changes made by an `nft` helper: its commands from argv (`nft add rule
 * inet x y …`, which nft joins with spaces and parses as a script) or from
 * the script it reads on stdin (`nft -f -`, `-f /dev/stdin`, `-i`). A dry
 * run (`-c`) and reads (`nft list …`) are no changes. nft applies a script
 * as one transaction: its exit status is every command's outcome.
 */

import type { CapturedStream, HelperProcess, KernelChange } from '../types.js';
import { parseNftScript } from './nft-script.js';

/** A helper with what it read on its own stdin, when that was kept (see keepsStdin). */
export type HelperRun = HelperProcess & { readonly stdin?: CapturedStream };

const NFT = /^nft$/;
const STDIN_PATHS = new Set(['-', '/dev/stdin', '/proc/self/fd/0', '/dev/fd/0']);
/** Short options that take a value (the next word, or the rest of the cluster). */
const VALUE_SHORT = new Set(['f', 'I', 'D', 'd']);
const VALUE_LONG = new Set(['--file', '--includepath', '--define', '--debug']);

interface NftInvocation {
  /** Where the commands come from. */
  readonly source: 'argv' | 'stdin' | 'file';
  readonly file: string | null;
  readonly words: readonly string[];
  readonly dryRun: boolean;
  readonly json: boolean;
}

export function isNft(path: string): boolean {
  return NFT.test(path.slice(path.lastIndexOf('/') + 1));
}

/** Whether the collector keeps what this helper reads on its stdin: an nft that reads its script there. */
export function keepsStdin(path: string, argv: readonly string[]): boolean {
  return isNft(path) && invocation(argv).source === 'stdin';
}

function invocation(argv: readonly string[]): NftInvocation {
  let file: string | null = null;
  let interactive = false;
  let dryRun = false;
  let json = false;
  const words: string[] = [];
  const args = argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (words.length > 0 || !a.startsWith('-') || a === '-') {
      words.push(a);
      continue;
    }
    if (a.startsWith('--')) {
      const [name, value] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
      const v = VALUE_LONG.has(name!) ? (value ?? args[++i] ?? '') : undefined;
      if (name === '--file') file = v ?? '';
      else if (name === '--interactive') interactive = true;
      else if (name === '--check') dryRun = true;
      else if (name === '--json') json = true;
      continue;
    }
    // A cluster of short options: `-nf -`, `-cf script`.
    for (let k = 1; k < a.length; k++) {
      const o = a[k]!;
      if (VALUE_SHORT.has(o)) {
        const v = k + 1 < a.length ? a.slice(k + 1) : (args[++i] ?? '');
        if (o === 'f') file = v;
        break;
      }
      if (o === 'i') interactive = true;
      else if (o === 'c') dryRun = true;
      else if (o === 'j') json = true;
    }
  }
  const source = file !== null ? (STDIN_PATHS.has(file) ? 'stdin' : 'file') : interactive ? 'stdin' : 'argv';
  return { source, file, words, dryRun, json };
}

export function nftChanges(h: HelperRun, atUs: number, netns: string): KernelChange[] {
  if (!isNft(h.path)) return [];
  const inv = invocation(h.argv);
  if (inv.dryRun) return [];
  const ok = h.outcome === null ? null : h.outcome.exitCode === 0 && h.outcome.signal === null;
  const error = ok === false ? { errno: `exit ${h.outcome?.exitCode ?? h.outcome?.signal ?? '?'}`, message: nftErrorLine(h.stderr) } : null;
  const change = (action: KernelChange['action'], subject: string, extra: Record<string, string> = {}): KernelChange => ({
    atUs,
    pid: h.pid,
    netns,
    object: 'nftables',
    action,
    subject,
    ok,
    error,
    attributes: { program: 'nft', source: inv.source, ...extra },
  });
  if (inv.source === 'file') return [change('change', `-f ${inv.file} (its commands were not taken)`)];
  let script: string;
  let cut: Record<string, string> = {};
  if (inv.source === 'stdin') {
    const stdin = h.stdin;
    if (!stdin || (stdin.bytes.length === 0 && stdin.totalBytes === 0)) return [change('change', `-f ${inv.file ?? '-'} (its script was not captured)`)];
    script = stdin.bytes.toString('utf8');
    if (stdin.truncated) cut = { cut: `script of ${stdin.totalBytes} bytes, ${stdin.bytes.length} taken` };
  } else {
    script = inv.words.join(' ');
  }
  if (inv.json) return [change('change', `(a JSON ruleset of ${Buffer.byteLength(script)} bytes, not decoded)`, cut)];
  const parsed = parseNftScript(script);
  const out = parsed.commands.map((c) => change(c.action, c.subject, cut));
  if (parsed.more > 0) out.push(change('change', `(${parsed.more} more nft commands, not listed)`, cut));
  if (parsed.error !== null) out.push(change('change', '(the rest of the nft script could not be read)', { ...cut, decodeError: parsed.error }));
  return out;
}

/** nft's own error text: its first `Error: …` line (`Error: Could not process rule: No such file or directory`). */
function nftErrorLine(stderr: CapturedStream): string | null {
  const line = stderr.bytes.toString('utf8').split('\n').find((l) => /(^|: )Error: /.test(l));
  if (!line) return null;
  const text = line.slice(line.indexOf('Error: ') + 7).trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
