/**
 * What an attachment's ADD created in the kernel that its DEL did not
 * remove (pure). Counted: links the ADD added (but bridges: one bridge
 * serves every pod of a network by design, and the gateway address on it
 * with it), and the iptables chains (-N) and rules (-A, -I) it added; an
 * address or route inside a pod's netns goes with its link. Removed: a
 * successful delete of the same link (by name, in the same netns), chain
 * (-X) or rule (-D with the same spec). Whether what is left still exists is
 * the kernel's to say (the caller's port).
 */

import type { KernelChange } from '../../collector/index.js';

export interface KernelObjectRef {
  readonly kind: 'link' | 'iptables-chain' | 'iptables-rule';
  readonly netns: string;
  /** Link name, chain name, or the rule's spec (`-t nat -A CNI-x …`). */
  readonly name: string;
  readonly table: string;
  /** A veth's other end (its name; in whichever netns the plugin moved it to). */
  readonly peer?: string;
}

export function leftBehindObjects(add: readonly KernelChange[], del: readonly KernelChange[]): KernelObjectRef[] {
  const out: KernelObjectRef[] = [];
  const deleted = new Set(del.filter((c) => c.ok === true && c.action === 'delete').map((c) => `${c.netns}|${c.object}|${c.subject}`));
  for (const c of add) {
    if (c.ok !== true || c.action !== 'add') continue;
    if (c.object === 'link') {
      if (c.attributes?.kind === 'bridge') continue;
      const name = c.subject.split(' ')[0]!;
      // A veth pair: the peer end is the one the host keeps (created or moved out): either end's delete removes both.
      const peer = c.attributes?.peer;
      const gone = [...deleted].some((d) => d.endsWith(`|link|${name}`) || (peer !== undefined && d.endsWith(`|link|${peer}`)));
      // The end it was created as, in the netns it was created in: it lasts as long as the pair.
      if (!gone) out.push({ kind: 'link', netns: c.netns, name, table: '', ...(peer !== undefined ? { peer } : {}) });
    } else if (c.object === 'iptables') {
      const args = c.subject.split(' ');
      const table = args[args.indexOf('-t') + 1] && args.includes('-t') ? args[args.indexOf('-t') + 1]! : 'filter';
      const n = args.indexOf('-N');
      if (n >= 0) {
        const chain = args[n + 1]!;
        if (!del.some((d) => d.ok === true && d.object === 'iptables' && / -X /.test(` ${d.subject} `) && d.subject.split(' ').includes(chain))) out.push({ kind: 'iptables-chain', netns: c.netns, name: chain, table });
        continue;
      }
      const a = args.findIndex((x) => x === '-A' || x === '-I');
      if (a < 0) continue;
      const chain = args[a + 1]!;
      const spec = c.subject.replace(/ -[AI] /, ' -D ');
      // A rule in a chain the DEL flushed or deleted is gone with it.
      const flushed = del.some((d) => d.ok === true && d.object === 'iptables' && /(^| )-[FX]( |$)/.test(d.subject) && d.subject.split(' ').includes(chain));
      if (!flushed && !deleted.has(`${c.netns}|iptables|${spec}`)) out.push({ kind: 'iptables-rule', netns: c.netns, name: c.subject, table });
    }
  }
  return out;
}

export function objectText(o: KernelObjectRef): string {
  return o.kind === 'link' ? `link ${o.name} (${o.netns})${o.peer ? ` and its veth peer ${o.peer}` : ''}` : o.kind === 'iptables-chain' ? `iptables chain ${o.table}/${o.name}` : `iptables rule ${o.name}`;
}
