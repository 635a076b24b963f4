/**
 * Changes made by helper programs: iptables/ip6tables (coreos/go-iptables
 * runs them with the rule as argv). Reads (`--version`, `-S`, `-C`, `-L`,
 * `-n`) are not changes.
 */

import type { HelperProcess, KernelChange } from '../types.js';

const IPTABLES = /^(ip6?tables)(-legacy|-nft)?$/;
const ACTIONS: Readonly<Record<string, KernelChange['action']>> = {
  '-A': 'add', '--append': 'add', '-I': 'add', '--insert': 'add', '-N': 'add', '--new-chain': 'add',
  '-D': 'delete', '--delete': 'delete', '-X': 'delete', '--delete-chain': 'delete', '-F': 'delete', '--flush': 'delete',
  '-R': 'change', '--replace': 'change', '-P': 'change', '--policy': 'change', '-E': 'change', '--rename-chain': 'change',
};
/** Options that only say how iptables waits for its lock: not part of what changes. */
const LOCK_OPTIONS = new Set(['--wait', '-w', '--wait-interval', '-W']);

export function helperChange(h: HelperProcess, atUs: number, netns: string): KernelChange | null {
  const base = h.path.slice(h.path.lastIndexOf('/') + 1);
  if (!IPTABLES.test(base)) return null;
  const args = withoutLockOptions(h.argv.slice(1));
  const verb = args.find((a) => a in ACTIONS);
  if (verb === undefined) return null;
  const ok = h.outcome === null ? null : h.outcome.exitCode === 0 && h.outcome.signal === null;
  return {
    atUs,
    pid: h.pid,
    netns,
    object: 'iptables',
    action: ACTIONS[verb]!,
    subject: iptablesText(args),
    ok,
    error: ok === false ? { errno: `exit ${h.outcome?.exitCode ?? h.outcome?.signal ?? '?'}`, message: null } : null,
    attributes: { program: base },
  };
}

/** iptables' arguments (the program's name left out) as a change's subject says them: lock options dropped, words quoted where needed. */
export function iptablesSubject(args: readonly string[]): string {
  return iptablesText(withoutLockOptions(args));
}

function iptablesText(args: readonly string[]): string {
  return args.map(quoted).join(' ');
}

function withoutLockOptions(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (LOCK_OPTIONS.has(a)) {
      if (/^\d+$/.test(args[i + 1] ?? '')) i++;
      continue;
    }
    if (/^--wait(-interval)?=/.test(a)) continue;
    out.push(a);
  }
  return out;
}

/** An argument as iptables-save would show it: in double quotes when it holds a space or a quote. */
function quoted(a: string): string {
  return /[\s"\\]/.test(a) || a === '' ? `"${a.replace(/["\\]/g, (c) => `\\${c}`)}"` : a;
}
