/**
 * A small, bounds-checked reader of netlink messages (pure, no native code):
 * the header, then type-length-value attributes. Input is whatever a traced
 * process sent, so nothing here trusts a length: a message or attribute
 * that runs past its bytes is a NetlinkDecodeError, never a read out of
 * range.
 */

export class NetlinkDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetlinkDecodeError';
  }
}

export const NLMSG_HDRLEN = 16;

export interface NetlinkMessage {
  readonly type: number;
  readonly flags: number;
  readonly seq: number;
  /** The bytes after the header, up to the message's own length. */
  readonly body: Buffer;
  /** The message was longer than the bytes taken (the tracer's cap). */
  readonly cut: boolean;
}

/** The messages of one send (usually one). A cut last message keeps the bytes it has. */
export function parseMessages(bytes: Buffer, sentLen: number = bytes.length): NetlinkMessage[] {
  const out: NetlinkMessage[] = [];
  let off = 0;
  while (off + NLMSG_HDRLEN <= bytes.length) {
    const len = bytes.readUInt32LE(off);
    if (len < NLMSG_HDRLEN) throw new NetlinkDecodeError(`netlink message at ${off} claims ${len} bytes, less than its header`);
    const end = off + len;
    const cut = end > bytes.length;
    if (cut && end > sentLen) throw new NetlinkDecodeError(`netlink message at ${off} claims ${len} bytes, past the ${sentLen} sent`);
    out.push({ type: bytes.readUInt16LE(off + 4), flags: bytes.readUInt16LE(off + 6), seq: bytes.readUInt32LE(off + 8), body: bytes.subarray(off + NLMSG_HDRLEN, Math.min(end, bytes.length)), cut });
    off = align4(end);
  }
  if (out.length === 0) throw new NetlinkDecodeError(`netlink request of ${bytes.length} bytes holds no message header`);
  return out;
}

export interface Attribute {
  readonly type: number;
  readonly nested: boolean;
  readonly value: Buffer;
}

/** The attributes from `from` on; a cut one at the end (the tracer's cap) is left out. */
export function parseAttributes(buf: Buffer, from = 0): Attribute[] {
  const out: Attribute[] = [];
  let off = from;
  while (off + 4 <= buf.length) {
    const len = buf.readUInt16LE(off);
    const type = buf.readUInt16LE(off + 2);
    if (len < 4) throw new NetlinkDecodeError(`attribute at ${off} claims ${len} bytes, less than its header`);
    if (off + len > buf.length) break;
    out.push({ type: type & 0x3fff, nested: (type & 0x8000) !== 0, value: buf.subarray(off + 4, off + len) });
    off = align4(off + len);
  }
  return out;
}

export function attr(attrs: readonly Attribute[], type: number): Buffer | undefined {
  return attrs.find((a) => a.type === type)?.value;
}

/** A NUL-terminated string attribute. */
export function attrString(v: Buffer | undefined): string | undefined {
  if (v === undefined) return undefined;
  const nul = v.indexOf(0);
  return v.subarray(0, nul < 0 ? v.length : nul).toString('utf8');
}

export function attrU32(v: Buffer | undefined): number | undefined {
  return v !== undefined && v.length >= 4 ? v.readUInt32LE(0) : undefined;
}

export function need(buf: Buffer, n: number, what: string): void {
  if (buf.length < n) throw new NetlinkDecodeError(`${what} needs ${n} bytes, the message has ${buf.length}`);
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
