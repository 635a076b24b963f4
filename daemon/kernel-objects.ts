/**
 * Whether the kernel still has an object an ADD created (the left-behind
 * finding's port): a link by /sys/class/net (host) or `ip link show`, an
 * iptables chain or rule by `iptables -S` / `-C`, an nftables table or
 * chain by `nft list`, inside the netns path for a pod's (gone with its
 * netns). Null when it cannot tell.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { KernelObjectRef } from '../store/index.js';

const run = (cmd: string, args: readonly string[]): number | null => {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 5000 });
  return r.error ? null : r.status;
};

/**
 * A command's exit status run in the object's netns: the host's as is, a
 * netns path through nsenter (a netns gone: false, the object with it),
 * null when the netns is known by inode only or the command cannot run.
 */
function inNetns(netns: string, cmd: string, args: readonly string[]): boolean | null {
  if (netns !== 'host' && !netns.startsWith('/')) return null;
  if (netns !== 'host' && !existsSync(netns)) return false;
  const s = netns === 'host' ? run(cmd, args) : run('nsenter', [`--net=${netns}`, cmd, ...args]);
  return s === null ? null : s === 0;
}

export function kernelHas(o: KernelObjectRef): boolean | null {
  if (o.kind === 'link') {
    if (o.netns === 'host') return existsSync(`/sys/class/net/${o.name}`);
    return inNetns(o.netns, 'ip', ['link', 'show', 'dev', o.name]);
  }
  if (o.kind === 'nftables-table' || o.kind === 'nftables-chain') return inNetns(o.netns, 'nft', ['list', o.kind === 'nftables-table' ? 'table' : 'chain', ...o.table.split(' '), o.name]);
  if (o.kind === 'iptables-chain') return inNetns(o.netns, 'iptables', ['-w', '5', '-t', o.table, '-S', o.name]);
  // A rule: `-C` with the spec the ADD gave (its -A or -I turned into -C), quoted words split as the shell would.
  const words = o.name.match(/"(?:[^"\\]|\\.)*"|\S+/g)?.map((w) => (w.startsWith('"') ? w.slice(1, -1).replace(/\\(.)/g, '$1') : w)) ?? [];
  const i = words.findIndex((w) => w === '-A' || w === '-I');
  if (i < 0) return null;
  const args = [...words.slice(0, i), '-C', words[i + 1]!, ...words.slice(words[i] === '-I' && /^\d+$/.test(words[i + 2] ?? '') ? i + 3 : i + 2)];
  return inNetns(o.netns, 'iptables', ['-w', '5', ...args]);
}
