/** A call's changes in a few words for lists and the pod story: `+3 links, +2 addrs, +1 route, 4 rules; 1 refused`. */

import type { KernelChange, KernelObject } from '../types.js';

const NOUN: Readonly<Record<KernelObject, readonly [string, string]>> = {
  link: ['link', 'links'],
  address: ['addr', 'addrs'],
  route: ['route', 'routes'],
  neighbour: ['neigh', 'neighs'],
  rule: ['ip rule', 'ip rules'],
  qdisc: ['qdisc', 'qdiscs'],
  filter: ['filter', 'filters'],
  sysctl: ['sysctl', 'sysctls'],
  iptables: ['rule', 'rules'],
  nftables: ['nft change', 'nft changes'],
};
const SIGN: Readonly<Record<KernelChange['action'], string>> = { add: '+', delete: '-', change: '' };

export function changeSummaryText(changes: readonly KernelChange[]): string {
  if (changes.length === 0) return 'no changes';
  const counts = new Map<string, { object: KernelObject; action: KernelChange['action']; n: number }>();
  for (const c of changes) {
    if (c.ok === false) continue;
    // A link set up, moved or enslaved is detail for the call's page, not the count.
    if (c.action === 'change' && c.object !== 'iptables' && c.object !== 'sysctl') continue;
    // iptables chains and rules count together, whatever the verb: "4 rules".
    const action = c.object === 'iptables' ? 'change' : c.action;
    const key = `${action}:${c.object}`;
    const entry = counts.get(key) ?? { object: c.object, action, n: 0 };
    entry.n++;
    counts.set(key, entry);
  }
  const parts = [...counts.values()].map((e) => `${SIGN[e.action]}${e.n} ${NOUN[e.object][e.n === 1 ? 0 : 1]}`);
  const refused = changes.filter((c) => c.ok === false).length;
  return `${parts.join(', ')}${refused > 0 ? `${parts.length > 0 ? '; ' : ''}${refused} refused` : ''}`;
}
