/**
 * What the tracer printed of one event, whole: a record line and the chunk
 * lines that carry its bytes (tracer-protocol.ts), put together. The
 * collector's framer (collector/tracer/record-framer.ts) makes them at the
 * edge, one framer per tracer run; everything after it sees frames, never a
 * chunk line. A frame whose chunk lines did not all come says so
 * (`whole: false`) and holds the bytes that did, from its start.
 *
 * | frame        | lines                  | bytes |
 * |--------------|------------------------|-------|
 * | exec         | X, then P, N, C and B  | the argv+env block (B), the path whole (N), the working directory (C) |
 * | read, write  | R or W, then D         | the payload |
 * | netlink-send | L, then M              | the request |
 * | any other    | its one line           | — |
 */

import type { TracerRecord } from './tracer-protocol.js';

type Line<K extends TracerRecord['kind']> = Extract<TracerRecord, { kind: K }>;

/** Lines that are parts of a frame, never frames of their own. */
export type ChunkLine = Line<'exec-chunk' | 'exec-parent' | 'exec-path-chunk' | 'exec-cwd-name' | 'data-chunk' | 'netlink-chunk'>;

export type ExecFrame = Omit<Line<'exec'>, 'path'> & {
  /** The path as the exec gave it: the X line's, or the N lines' when they carried a longer one. */
  readonly path: string;
  /** The path is its beginning only (its N lines did not all come). */
  readonly pathCut: boolean;
  /** For a relative path, the working directory the kernel resolved it against (C lines), absolute; null when not known. */
  readonly cwd: string | null;
  /** The name of the process that exec'd it (P line); null when none came. */
  readonly parentComm: string | null;
  /** The argv+env block from its start, as far as its B lines reach (at most EXEC_BLOCK_CAP_BYTES). */
  readonly block: Buffer;
  /** Every B line came. */
  readonly whole: boolean;
};

/** A read or a write with its payload: `len` bytes moved, `bytes` what was taken of them (up to PAYLOAD_CAP_BYTES). */
export type PayloadFrame = Line<'read' | 'write'> & { readonly bytes: Buffer; readonly whole: boolean };

/** A netlink request with its bytes: `len` sent, `bytes` what was taken of them (up to NETLINK_CAP_BYTES). */
export type NetlinkFrame = Line<'netlink-send'> & { readonly bytes: Buffer; readonly whole: boolean };

/** One event as the collector handles it, from the framer on. */
export type TracerFrame = ExecFrame | PayloadFrame | NetlinkFrame | Exclude<TracerRecord, ChunkLine | { kind: 'exec' | 'read' | 'write' | 'netlink-send' | 'noise' }>;

/** What a call did to the kernel: the assembler attaches these to the call of their process; collector/changes decodes them. */
export type KernelFrame = Extract<TracerFrame, { kind: 'extack' | 'netlink-send' | 'netlink-ack' | 'link-name' | 'sysctl-open' | 'sysctl-write' }>;

const KERNEL_KINDS = new Set<TracerFrame['kind']>(['extack', 'netlink-send', 'netlink-ack', 'link-name', 'sysctl-open', 'sysctl-write']);

export function isKernelFrame(frame: TracerFrame): frame is KernelFrame {
  return KERNEL_KINDS.has(frame.kind);
}
