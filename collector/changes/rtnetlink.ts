/**
 * rtnetlink requests → what they change, in `ip`'s words. Pure. Reads
 * (RTM_GET*) and messages of other families are not changes (null). A
 * device index reads as its name where the caller knows it (`names`),
 * else `if<index>`.
 */

import type { KernelChange, KernelObject } from '../types.js';
import { attr, attrString, attrU32, need, parseAttributes, type Attribute, type NetlinkMessage } from './netlink.js';

export interface RtChange {
  readonly object: KernelObject;
  readonly action: KernelChange['action'];
  readonly subject: string;
  readonly attributes: Record<string, string>;
  /** A link this request names with its index (for a later name lookup). */
  readonly ifindex?: number;
  /** The name a link request gives (IFLA_IFNAME), with the index it has (0 when the kernel will choose). */
  readonly ifname?: string;
}

/** An interface index to the name to show. */
export type IfName = (index: number) => string;

const NLM_F_CREATE = 0x400;
const IFF_UP = 1;
const OBJECTS: ReadonlyArray<readonly [number, KernelObject]> = [
  [16, 'link'],
  [20, 'address'],
  [24, 'route'],
  [28, 'neighbour'],
  [32, 'rule'],
  [36, 'qdisc'],
  [44, 'filter'],
];

export function rtObject(type: number): { object: KernelObject; op: 'new' | 'del' | 'get' | 'set' } | null {
  for (const [base, object] of OBJECTS) {
    if (type >= base && type < base + 4) return { object, op: (['new', 'del', 'get', 'set'] as const)[type - base]! };
  }
  return null;
}

export function decodeRtRequest(msg: NetlinkMessage, name: IfName): RtChange | null {
  const o = rtObject(msg.type);
  if (!o || o.op === 'get') return null;
  const action: KernelChange['action'] = o.op === 'del' ? 'delete' : o.op === 'set' || (o.object === 'link' && (msg.flags & NLM_F_CREATE) === 0) ? 'change' : 'add';
  switch (o.object) {
    case 'link':
      return link(msg.body, action, name);
    case 'address':
      return address(msg.body, action, name);
    case 'route':
      return route(msg.body, action, name);
    case 'neighbour':
      return neighbour(msg.body, action, name);
    case 'rule':
      return rule(msg.body, action);
    case 'qdisc':
    case 'filter':
      return tc(msg.body, o.object, action, name);
    default:
      return null;
  }
}

function link(body: Buffer, action: KernelChange['action'], name: IfName): RtChange | null {
  need(body, 16, 'a link request (ifinfomsg)');
  const index = body.readInt32LE(4);
  const flags = body.readUInt32LE(8);
  const change = body.readUInt32LE(12);
  const attrs = parseAttributes(body, 16);
  const ifname = attrString(attr(attrs, 3));
  // A request that names no link and creates none changes nothing: iproute2's `ip` opens with an empty
  // RTM_NEWLINK to learn whether the kernel takes it (the kernel answers ENODEV).
  if (action !== 'add' && index <= 0 && ifname === undefined) return null;
  const dev = ifname ?? (index > 0 ? name(index) : '?');
  const parts = [dev];
  const attributes: Record<string, string> = {};
  if (index > 0) attributes.index = String(index);
  const info = attr(attrs, 18);
  let kind: string | undefined;
  if (info) {
    const infoAttrs = parseAttributes(info);
    kind = attrString(attr(infoAttrs, 1));
    if (kind) {
      parts.push('type', kind);
      attributes.kind = kind;
    }
    const data = attr(infoAttrs, 2);
    if (kind === 'veth' && data) {
      const peer = attr(parseAttributes(data), 1);
      const peerName = peer && peer.length >= 16 ? attrString(attr(parseAttributes(peer, 16), 3)) : undefined;
      if (peerName) {
        parts.push('peer', peerName);
        attributes.peer = peerName;
      }
    }
  }
  const mtu = attrU32(attr(attrs, 4));
  if (mtu !== undefined) parts.push('mtu', String(mtu));
  const master = attrU32(attr(attrs, 10));
  if (master !== undefined) parts.push(master === 0 ? 'nomaster' : `master ${name(master)}`);
  const nsFd = attrU32(attr(attrs, 28));
  if (nsFd !== undefined) parts.push('netns', `fd:${nsFd}`);
  const nsPid = attrU32(attr(attrs, 19));
  if (nsPid !== undefined) parts.push('netns', `pid:${nsPid}`);
  const protinfo = attr(attrs, 12);
  if (protinfo) {
    // A bridge port's settings (IFLA_BRPORT_*): the one plugins set is hairpin mode (IFLA_BRPORT_MODE).
    const mode = attr(parseAttributes(protinfo), 4);
    if (mode && mode.length >= 1) parts.push('hairpin', mode[0] ? 'on' : 'off');
  }
  const mac = attr(attrs, 1);
  if (mac && mac.length === 6) parts.push('address', macText(mac));
  if ((change & IFF_UP) !== 0 || (action === 'change' && (flags & IFF_UP) !== 0)) parts.push((flags & IFF_UP) !== 0 ? 'up' : 'down');
  return { object: 'link', action, subject: parts.join(' '), attributes, ...(index > 0 ? { ifindex: index } : {}), ...(ifname !== undefined ? { ifname } : {}) };
}

function address(body: Buffer, action: KernelChange['action'], name: IfName): RtChange {
  need(body, 8, 'an address request (ifaddrmsg)');
  const family = body[0]!;
  const prefix = body[1]!;
  const index = body.readUInt32LE(4);
  const attrs = parseAttributes(body, 8);
  const local = attr(attrs, 2) ?? attr(attrs, 1);
  const ip = local ? ipText(family, local) : '?';
  return { object: 'address', action, subject: `${ip}/${prefix} dev ${name(index)}`, attributes: { index: String(index) }, ifindex: index };
}

function route(body: Buffer, action: KernelChange['action'], name: IfName): RtChange {
  need(body, 12, 'a route request (rtmsg)');
  const family = body[0]!;
  const dstLen = body[1]!;
  const table = body[4]!;
  const attrs = parseAttributes(body, 12);
  const dst = attr(attrs, 1);
  const gw = attr(attrs, 5);
  const oif = attrU32(attr(attrs, 4));
  const tableAttr = attrU32(attr(attrs, 15)) ?? table;
  const parts = [dstLen === 0 ? 'default' : dst ? `${ipText(family, dst)}/${dstLen}` : `?/${dstLen}`];
  if (gw) parts.push('via', ipText(family, gw));
  if (oif !== undefined) parts.push('dev', name(oif));
  const src = attr(attrs, 7);
  if (src) parts.push('src', ipText(family, src));
  const metric = attrU32(attr(attrs, 6));
  if (metric !== undefined) parts.push('metric', String(metric));
  if (tableAttr !== 254 && tableAttr !== 0) parts.push('table', String(tableAttr));
  const attributes: Record<string, string> = { table: String(tableAttr) };
  if (oif !== undefined) attributes.index = String(oif);
  return { object: 'route', action, subject: parts.join(' '), attributes, ...(oif !== undefined ? { ifindex: oif } : {}) };
}

function neighbour(body: Buffer, action: KernelChange['action'], name: IfName): RtChange {
  need(body, 12, 'a neighbour request (ndmsg)');
  const family = body[0]!;
  const index = body.readInt32LE(4);
  const attrs = parseAttributes(body, 12);
  const dst = attr(attrs, 1);
  const ll = attr(attrs, 2);
  const parts = [dst ? ipText(family, dst) : '?', 'dev', name(index)];
  if (ll && ll.length === 6) parts.push('lladdr', macText(ll));
  return { object: 'neighbour', action, subject: parts.join(' '), attributes: { index: String(index) }, ifindex: index };
}

function rule(body: Buffer, action: KernelChange['action']): RtChange {
  need(body, 12, 'a rule request (fib_rule_hdr)');
  const family = body[0]!;
  const attrs: Attribute[] = parseAttributes(body, 12);
  const parts: string[] = [];
  const prio = attrU32(attr(attrs, 6));
  if (prio !== undefined) parts.push('priority', String(prio));
  const src = attr(attrs, 2);
  parts.push('from', src ? `${ipText(family, src)}/${body[2]}` : 'all');
  const dst = attr(attrs, 1);
  if (dst) parts.push('to', `${ipText(family, dst)}/${body[1]}`);
  const table = attrU32(attr(attrs, 15)) ?? body[4]!;
  parts.push('lookup', String(table));
  return { object: 'rule', action, subject: parts.join(' '), attributes: { table: String(table) } };
}

function tc(body: Buffer, object: 'qdisc' | 'filter', action: KernelChange['action'], name: IfName): RtChange {
  need(body, 20, `a ${object} request (tcmsg)`);
  const index = body.readInt32LE(4);
  const handle = body.readUInt32LE(8);
  const parent = body.readUInt32LE(12);
  const kind = attrString(attr(parseAttributes(body, 20), 1)) ?? '?';
  const parentText = parent === 0xffffffff ? 'root' : parent === 0xfffffff1 ? 'ingress' : `parent ${tcHandle(parent)}`;
  return { object, action, subject: `${kind} dev ${name(index)} ${parentText} handle ${tcHandle(handle)}`, attributes: { index: String(index), kind }, ifindex: index };
}

function tcHandle(h: number): string {
  return `${(h >>> 16).toString(16)}:${(h & 0xffff).toString(16)}`;
}

export function ipText(family: number, b: Buffer): string {
  if (family === 2 && b.length >= 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (family === 10 && b.length >= 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(b.readUInt16BE(i).toString(16));
    // The longest run of zero groups as ::
    const text = groups.join(':');
    const m = text.match(/(^|:)0(:0)+(:|$)/g);
    if (!m) return text;
    const longest = m.reduce((a, c) => (c.length > a.length ? c : a));
    return text.replace(longest, '::');
  }
  return b.toString('hex');
}

function macText(b: Buffer): string {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');
}
