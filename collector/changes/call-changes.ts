/**
 * A call's kernel records (attached by the assembler in arrival order) →
 * its changes and the kernel's messages. Pure; run when a call is
 * published. A request the decoders cannot read becomes a change of what
 * is known with the decoder's reason, never an exception.
 */

import { NETLINK_CAP_BYTES, type KernelFrame } from '../../bpf/index.js';
import type { KernelChange, KernelMessage } from '../types.js';
import { errnoName } from './errno.js';
import { helperChange } from './helpers.js';
import { helperNetns } from './helper-netns.js';
import { nftChanges, type HelperRun } from './nft-helper.js';
import { NetlinkDecodeError, parseMessages } from './netlink.js';
import { decodeRtRequest } from './rtnetlink.js';

export interface KernelEntry {
  /** Unix epoch µs of the record. */
  readonly atUs: number;
  readonly rec: KernelFrame;
}

export interface NetnsNames {
  /** The node's own netns inode (the daemon's). */
  readonly host: string | null;
  /** The inode of the call's CNI_NETNS, and that path. */
  readonly pod: string | null;
  readonly podPath: string | null;
}

export function netnsLabel(inode: string, names: NetnsNames): string {
  if (names.host !== null && inode === names.host) return 'host';
  if (names.pod !== null && inode === names.pod && names.podPath) return names.podPath;
  return `netns:[${inode}]`;
}

interface Send {
  atUs: number;
  ts: number;
  pid: number;
  tid: number;
  netns: string;
  len: number;
  bytes: Buffer;
}

export function kernelMessages(entries: readonly KernelEntry[], processName: (pid: number) => string): KernelMessage[] {
  const out: KernelMessage[] = [];
  for (const { atUs, rec } of entries) if (rec.kind === 'extack') out.push({ atUs, pid: rec.pid, process: processName(rec.pid), message: rec.message });
  return out;
}

export function callChanges(entries: readonly KernelEntry[], helpers: readonly HelperRun[], names: NetnsNames): KernelChange[] {
  const sends: Send[] = [];
  const acks: Array<Extract<KernelFrame, { kind: 'netlink-ack' }>> = [];
  const extacks: Array<Extract<KernelFrame, { kind: 'extack' }>> = [];
  const linkNames: Array<Extract<KernelFrame, { kind: 'link-name' }>> = [];
  const sysctlOpen = new Map<string, Extract<KernelFrame, { kind: 'sysctl-open' }>>();
  const changes: KernelChange[] = [];
  for (const { atUs, rec } of entries) {
    switch (rec.kind) {
      case 'netlink-send':
        sends.push({ atUs, ts: rec.ts, pid: rec.pid, tid: rec.tid, netns: rec.netns, len: rec.len, bytes: rec.bytes });
        break;
      case 'netlink-ack':
        acks.push(rec);
        break;
      case 'extack':
        extacks.push(rec);
        break;
      case 'link-name':
        linkNames.push(rec);
        break;
      case 'sysctl-open':
        sysctlOpen.set(`${rec.pid}:${rec.fd}`, rec);
        break;
      case 'sysctl-write': {
        const open = sysctlOpen.get(`${rec.pid}:${rec.fd}`);
        if (!open) break;
        sysctlOpen.delete(`${rec.pid}:${rec.fd}`);
        changes.push(sysctlChange(open, rec, atUs, names));
        break;
      }
    }
  }
  const parsed = sends.map((s) => ({ send: s, msgs: safeParse(s) }));
  // Names of links per netns, from the kernel's answers (I) and from requests that give index and name.
  const nameOf = new Map<string, string>();
  const bySeq = new Map<string, Send>();
  for (const { send, msgs } of parsed) if (Array.isArray(msgs)) for (const m of msgs) bySeq.set(`${send.pid}:${m.seq}`, send);
  for (const n of linkNames) {
    const s = bySeq.get(`${n.pid}:${n.seq}`);
    if (s && n.name) nameOf.set(`${s.netns}:${n.index}`, n.name);
  }
  for (const { send, msgs } of parsed) {
    if (!Array.isArray(msgs)) {
      changes.push(undecodable(send, msgs, names));
      continue;
    }
    const name = (index: number): string => nameOf.get(`${send.netns}:${index}`) ?? `if${index}`;
    for (const m of msgs) {
      let rt;
      try {
        rt = decodeRtRequest(m, name);
      } catch (err) {
        if (!(err instanceof NetlinkDecodeError)) throw err;
        changes.push(undecodable(send, err, names));
        continue;
      }
      if (!rt) continue;
      const ack = acks.find((a) => a.pid === send.pid && a.seq === m.seq && a.ts >= send.ts);
      const ok = ack ? ack.error === 0 : null;
      let error: KernelChange['error'] = null;
      if (ack && ack.error !== 0) {
        const text = extacks.find((k) => k.pid === send.pid && k.ts >= send.ts && k.ts <= ack.ts);
        error = { errno: errnoName(-ack.error), message: text ? text.message : null };
      }
      const attributes = m.cut ? { ...rt.attributes, cut: `request of ${send.len} bytes, ${NETLINK_CAP_BYTES} taken` } : rt.attributes;
      changes.push({ atUs: send.atUs, pid: send.pid, netns: netnsLabel(send.netns, names), object: rt.object, action: rt.action, subject: rt.subject, ok, error, attributes });
    }
  }
  for (const h of helpers) {
    const netns = helperNetns(h, helpers, names.podPath);
    const c = helperChange(h, h.startedAtUs, netns);
    if (c) changes.push(c);
    changes.push(...nftChanges(h, h.startedAtUs, netns));
  }
  return changes.sort((a, b) => a.atUs - b.atUs);
}

function safeParse(s: Send): ReturnType<typeof parseMessages> | NetlinkDecodeError {
  try {
    return parseMessages(s.bytes, s.len);
  } catch (err) {
    if (err instanceof NetlinkDecodeError) return err;
    throw err;
  }
}

function undecodable(send: Send, err: NetlinkDecodeError, names: NetnsNames): KernelChange {
  return { atUs: send.atUs, pid: send.pid, netns: netnsLabel(send.netns, names), object: 'link', action: 'change', subject: `(undecodable netlink request of ${send.len} bytes)`, ok: null, error: null, attributes: { decodeError: err.message } };
}

function sysctlChange(open: Extract<KernelFrame, { kind: 'sysctl-open' }>, w: Extract<KernelFrame, { kind: 'sysctl-write' }>, atUs: number, names: NetnsNames): KernelChange {
  const key = open.path.replace(/^\/proc\/sys\//, '').replaceAll('/', '.');
  const value = w.value.toString('utf8').replace(/\s+$/, '');
  const cut = w.len > w.value.length;
  return {
    atUs,
    pid: w.pid,
    netns: netnsLabel(open.netns, names),
    object: 'sysctl',
    action: 'change',
    subject: `${key} = ${value}${cut ? '…' : ''}`,
    ok: true,
    error: null,
    ...(cut ? { attributes: { cut: `value of ${w.len} bytes, ${w.value.length} taken` } } : {}),
  };
}
