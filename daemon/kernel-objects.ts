/**
 * Whether the kernel still has an object an ADD created (the left-behind
 * finding's port): a link by /sys/class/net (host) or `ip link show` inside
 * the netns path (a pod's: gone with its netns), an iptables chain or rule
 * by `iptables -S` / `-C`, an nftables table or chain by `nft list`. Null when it cannot tell.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { KernelObjectRef } from '../store/index.js';

const run = (cmd: string, args: readonly string[]): number | null => {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 });
  return r.error ? null : r.status;
};

export function kernelHas(o: KernelObjectRef): boolean | null {
  if (o.kind === 'link') {
    if (o.netns === 'host') return existsSync(`/sys/class/net/${o.name}`);
    if (!o.netns.startsWith('/')) return null;
    if (!existsSync(o.netns)) return false;
    const s = run('nsenter', [`--net=${o.netns}`, 'ip', 'link', 'show', 'dev', o.name]);
    return s === null ? null : s === 0;
  }
  if (o.netns !== 'host') return null;
  if (o.kind === 'nftables-table' || o.kind === 'nftables-chain') {
    const s = run('nft', ['list', o.kind === 'nftables-table' ? 'table' : 'chain', ...o.table.split(' '), o.name]);
    return s === null ? null : s === 0;
  }
  if (o.kind === 'iptables-chain') {
    const s = run('iptables', ['-w', '5', '-t', o.table, '-S', o.name]);
    return s === null ? null : s === 0;
  }
  // A rule: `-C` with the spec the ADD gave (its -A or -I turned into -C), quoted words split as the shell would.
  const words = o.name.match(/"(?:[^"\\]|\\.)*"|\S+/g)?.map((w) => (w.startsWith('"') ? w.slice(1, -1).replace(/\\(.)/g, '$1') : w)) ?? [];
  const i = words.findIndex((w) => w === '-A' || w === '-I');
  if (i < 0) return null;
  const args = [...words.slice(0, i), '-C', words[i + 1]!, ...words.slice(words[i] === '-I' && /^\d+$/.test(words[i + 2] ?? '') ? i + 3 : i + 2)];
  const s = run('iptables', ['-w', '5', ...args]);
  return s === null ? null : s === 0;
}
