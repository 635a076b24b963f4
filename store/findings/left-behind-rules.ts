/**
 * What an attachment's ADD created in the kernel that its DEL did not
 * remove (pure). Counted: links the ADD added, the iptables chains (-N)
 * and rules (-A, -I) and the nftables tables and chains it added; an
 * address or route inside a pod's netns goes with its link, an nft rule
 * with its chain. Removed: a successful delete of the same link (by name,
 * in the same netns), chain (-X) or rule (-D with the same spec), nft
 * table or chain (`delete`, `destroy`; a chain with its table; all with
 * `flush ruleset`).
 * Whether what is left still exists is the kernel's to say (the caller's
 * port).
 *
 * Shared objects are not counted (sharedWithLaterAdds): what a later ADD of
 * another attachment reused: a change of its names the object (a link by
 * its name, as `dev`, or as `master`; a chain in a rule it added; the same
 * rule added again), or, for iptables, one of its helpers named it (a `-C`
 * that found the rule in place, a `-S` of the chain): the object serves more
 * than the pod that created it, and staying after that pod's DEL is by
 * design. A bridge is shared by design even before a second pod comes (one
 * bridge serves every pod of a network), and the gateway address on it
 * with it.
 */

import { iptablesSubject, type KernelChange } from '../../collector/index.js';

export interface KernelObjectRef {
  readonly kind: 'link' | 'iptables-chain' | 'iptables-rule' | 'nftables-table' | 'nftables-chain';
  readonly netns: string;
  /** Link name, chain name, the rule's spec (`-t nat -A CNI-x …`), or an nftables table's or chain's name. */
  readonly name: string;
  /** An iptables table (`nat`); for nftables, the family and the table (`inet cni`) of a chain, the family of a table. */
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
    } else if (c.object === 'nftables') {
      const o = nftObject(c.subject);
      if (o && !nftRemoved(o, del)) out.push({ kind: o.kind, netns: c.netns, name: o.name, table: o.table });
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
  // A chain in a table left too goes with it: the table is named.
  return out.filter((o) => o.kind !== 'nftables-chain' || !out.some((t) => t.kind === 'nftables-table' && t.netns === o.netns && `${t.table} ${t.name}` === o.table));
}

/** An nft `add`/`create` of a table or chain (`add chain inet cni fwd { … }`); rules go with their chain. */
function nftObject(subject: string): { kind: 'nftables-table' | 'nftables-chain'; name: string; table: string } | null {
  const w = subject.split(' ');
  if (w[0] !== 'add' && w[0] !== 'create') return null;
  if (w[1] === 'table' && w[3]) return { kind: 'nftables-table', name: w[3], table: w[2]! };
  if (w[1] === 'chain' && w[4]) return { kind: 'nftables-chain', name: w[4], table: `${w[2]} ${w[3]}` };
  return null;
}

/** Whether the DEL removed it: deleted (or destroyed) itself, its table, or the whole ruleset flushed. */
function nftRemoved(o: { kind: string; name: string; table: string }, del: readonly KernelChange[]): boolean {
  const table = o.kind === 'nftables-table' ? `${o.table} ${o.name}` : o.table;
  return del.some((d) => {
    if (d.ok !== true || d.object !== 'nftables' || d.action !== 'delete') return false;
    const w = d.subject.split(' ');
    if (w[1] === 'ruleset' && w[0] === 'flush') return true;
    if (w[0] !== 'delete' && w[0] !== 'destroy') return false;
    return (w[1] === 'table' && `${w[2]} ${w[3]}` === table) || (o.kind === 'nftables-chain' && w[1] === 'chain' && `${w[2]} ${w[3]}` === table && w[4] === o.name);
  });
}

export function objectText(o: KernelObjectRef): string {
  if (o.kind === 'nftables-table') return `nftables table ${o.table} ${o.name}`;
  if (o.kind === 'nftables-chain') return `nftables chain ${o.table} ${o.name}`;
  return o.kind === 'link' ? `link ${o.name} (${o.netns})${o.peer ? ` and its veth peer ${o.peer}` : ''}` : o.kind === 'iptables-chain' ? `iptables chain ${o.table}/${o.name}` : `iptables rule ${o.name}`;
}

/** What a later ADD of another attachment did: its changes, and the argv of its iptables helpers (reads too). */
export interface LaterAdd {
  readonly changes: readonly KernelChange[];
  readonly iptablesArgv: ReadonlyArray<readonly string[]>;
}

/** The objects split into those no later ADD of another attachment reused (`left`) and those one did (`shared`). */
export function sharedWithLaterAdds(objects: readonly KernelObjectRef[], later: readonly LaterAdd[]): { left: KernelObjectRef[]; shared: KernelObjectRef[] } {
  const left: KernelObjectRef[] = [];
  const shared: KernelObjectRef[] = [];
  for (const o of objects) (later.some((l) => reuses(l, o)) ? shared : left).push(o);
  return { left, shared };
}

function reuses(later: LaterAdd, o: KernelObjectRef): boolean {
  if (o.kind === 'link') return later.changes.some((c) => c.netns === o.netns && namesLink(c, o.name));
  if (o.kind === 'nftables-table' || o.kind === 'nftables-chain') return later.changes.some((c) => c.object === 'nftables' && c.netns === o.netns && namesNft(c.subject, o));
  const named = (words: readonly string[]) => tableOf(words) === o.table && (o.kind === 'iptables-chain' ? words.includes(o.name) : ruleKey(words) === ruleKey(o.name.split(' ')));
  if (later.changes.some((c) => c.object === 'iptables' && c.netns === o.netns && named(c.subject.split(' ')))) return true;
  // Helpers run in the host's netns, as their changes say.
  return o.netns === 'host' && later.iptablesArgv.some((argv) => named(iptablesSubject(argv.slice(1)).split(' ')));
}

/** A link change naming it (`eth0 up`, `veth1 master cni0`), or an address, route, neighbour or tc object on it (`dev cni0`). */
function namesLink(c: KernelChange, name: string): boolean {
  const words = c.subject.split(' ');
  if (c.object === 'link' && words[0] === name) return true;
  for (let i = 0; i + 1 < words.length; i++) if ((words[i] === 'dev' || words[i] === 'master') && words[i + 1] === name) return true;
  return false;
}

/** An nft command on the table (`add chain inet cni x`, `add rule inet cni fwd …`), or on the chain. */
function namesNft(subject: string, o: KernelObjectRef): boolean {
  const w = subject.split(' ');
  const table = `${w[2]} ${w[3]}`;
  if (o.kind === 'nftables-table') return table === `${o.table} ${o.name}`;
  return table === o.table && (w[1] === 'chain' || w[1] === 'rule') && w[4] === o.name;
}

function tableOf(words: readonly string[]): string {
  const t = words.indexOf('-t');
  return t >= 0 && words[t + 1] ? words[t + 1]! : 'filter';
}

/** A rule's spec whatever adds, checks or deletes it: `-A CHAIN <matches>` (an -I's position left out); null for no rule. */
function ruleKey(words: readonly string[]): string | null {
  const i = words.findIndex((w) => w === '-A' || w === '-I' || w === '-C' || w === '-D');
  if (i < 0 || words[i + 1] === undefined) return null;
  const rest = words.slice(i + 2);
  if (words[i] === '-I' && /^\d+$/.test(rest[0] ?? '')) rest.shift();
  return [...words.slice(0, i).filter((w, k, all) => w !== '-t' && all[k - 1] !== '-t'), '-A', words[i + 1], ...rest].join(' ');
}
