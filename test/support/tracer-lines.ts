/**
 * Builds tracer output lines the way bpf/cnirec.bt prints them, for synthetic
 * scenarios the recorded fixtures cannot show (pid reuse, lost records,
 * out-of-order delivery). Chunking follows the .bt program exactly: fixed
 * 200-byte chunks, the last one taken as the 200 bytes that end the block
 * (an exec block under 200 bytes is read from before its start, a payload
 * under 200 bytes past its end).
 */

import { CHUNK_BYTES, CWD_WALK_STEPS, EXEC_BLOCK_CAP_BYTES, EXEC_HEADER_PATH_BYTES, PAYLOAD_CAP_BYTES } from '../../bpf/tracer-protocol.js';

/** bpftrace's %rx: `\xNN` per byte. */
export function hex(data: Buffer): string {
  let out = '';
  for (const b of data) out += `\\x${b.toString(16).padStart(2, '0')}`;
  return out;
}

/** 200 bytes of `data` from `start` (may be < 0), zero-filled outside it. */
function window(data: Buffer, start: number): Buffer {
  const out = Buffer.alloc(CHUNK_BYTES);
  for (let i = 0; i < CHUNK_BYTES; i++) {
    const at = start + i;
    if (at >= 0 && at < data.length) out[i] = data[at]!;
  }
  return out;
}

export interface ExecSpec {
  /** Monotonic nanoseconds. */
  ts: number;
  pid: number;
  ppid: number;
  /** The parent is traced too (the tracer's `+` after the ppid, `-` when not): a delegate's or a helper's exec. Left out: no mark, as a tracer before it. */
  parentTraced?: boolean;
  /** Process start time (ns); names the process across pid reuse. */
  start: number;
  path: string;
  argv?: readonly string[];
  env?: Readonly<Record<string, string>>;
  stdio?: readonly [number, number, number];
  /** The working directory, for a relative path (C lines): an absolute path, walked up to `/`. */
  cwd?: string;
  /** The parent's name: a P line after the X (the tracer always prints one; left out here unless given). */
  parentComm?: string;
  /** The CPU whose buffer the exec's lines go through, above the pid (left out: as a tracer before the field, or CPU 0). */
  cpu?: number;
}

/** An exec line's first number: cpu × 2^22 + pid, as the tracer prints it. */
function onCpu(pid: number, cpu = 0): number {
  return cpu * 4_194_304 + pid;
}

export function execBlock(argv: readonly string[], env: Readonly<Record<string, string>>): { block: Buffer; argBytes: number } {
  const args = Buffer.from(argv.map((a) => `${a}\0`).join(''));
  const envs = Buffer.from(Object.entries(env).map(([k, v]) => `${k}=${v}\0`).join(''));
  return { block: Buffer.concat([args, envs]), argBytes: args.length };
}

/**
 * The X header, its P line (when `parentComm` is given), the N lines of a path of 199
 * bytes or more (the X line's path cut there), the C lines of a relative
 * path's working directory (`spec.cwd`; none past the walk's steps, as the
 * tracer stops short), then the B chunks.
 */
export function execLines(spec: ExecSpec): string[] {
  const argv = spec.argv ?? [spec.path];
  const { block, argBytes } = execBlock(argv, spec.env ?? {});
  const [i, o, e] = spec.stdio ?? [1000, 1001, 1002];
  const path = Buffer.from(spec.path);
  const headerPath = path.subarray(0, EXEC_HEADER_PATH_BYTES).toString('utf8');
  const id = onCpu(spec.pid, spec.cpu);
  const lines = [`X ${spec.ts} ${id} ${spec.ppid}${spec.parentTraced === undefined ? '' : spec.parentTraced ? '+' : '-'} ${spec.start} ${i} ${o} ${e} ${argBytes} ${block.length} ${headerPath}`];
  if (path.length >= EXEC_HEADER_PATH_BYTES) {
    for (let off = 0; off < path.length; off += CHUNK_BYTES) {
      const start = off + CHUNK_BYTES > path.length ? path.length - CHUNK_BYTES : off;
      lines.push(`N ${id} ${path.length} ${start} ${hex(window(path, start))}`);
    }
  }
  if (spec.parentComm !== undefined) lines.splice(1, 0, `P ${id} ${spec.parentComm}`);
  if (!spec.path.startsWith('/') && spec.cwd !== undefined) lines.push(...cwdLines(id, spec.cwd));
  const total = block.length;
  for (let off = 0; off < total && off < EXEC_BLOCK_CAP_BYTES; off += CHUNK_BYTES) {
    const start = off + CHUNK_BYTES > total ? total - CHUNK_BYTES : off;
    lines.push(`B ${id} ${start} ${hex(window(block, start))}`);
  }
  return lines;
}

/** The C lines of a walk from `cwd` up to `/`: innermost name first, then the root's empty name; none past the steps. `pid`: the exec's first number (cpu × 2^22 + pid). */
export function cwdLines(pid: number, cwd: string): string[] {
  const names = cwd.split('/').filter((n) => n.length > 0).reverse();
  const lines = names.slice(0, CWD_WALK_STEPS).map((name, depth) => `C ${pid} ${depth} ${hex(Buffer.from(name))}`);
  if (names.length < CWD_WALK_STEPS) lines.push(`C ${pid} ${names.length} `);
  return lines;
}

export interface IoSpec {
  ts: number;
  pid: number;
  tid?: number;
  /** The open file (struct file) it went to; the X record's stdio files name the call's. */
  file: number;
  /** The fd used; reads default to 0. */
  fd?: number;
  /** The CPU whose buffer it went through (printed as the tracer does); left out, lines of a tracer before the field. */
  cpu?: number;
}

function payloadChunks(tid: number, data: Buffer, cpu = 0): string[] {
  const lines: string[] = [];
  const total = data.length;
  for (let off = 0; off < total && off < PAYLOAD_CAP_BYTES; off += CHUNK_BYTES) {
    const start = off + CHUNK_BYTES > total && total >= CHUNK_BYTES ? total - CHUNK_BYTES : off;
    lines.push(`D ${cpu * 4_194_304 + tid} ${start} ${hex(window(data, start))}`);
  }
  return lines;
}

function cpuField(spec: IoSpec): string {
  return spec.cpu === undefined ? '' : ` ${spec.cpu}`;
}

/** An R header (a read, from fd 0 unless said) and its D chunks. */
export function readLines(spec: IoSpec, data: Buffer | string): string[] {
  const buf = Buffer.from(data);
  const tid = spec.tid ?? spec.pid;
  return [`R ${spec.ts} ${spec.pid} ${tid} ${spec.fd ?? 0} ${spec.file} ${buf.length}${cpuField(spec)}`, ...payloadChunks(tid, buf, spec.cpu)];
}

/** A W header (a write through `fd`) and its D chunks. */
export function writeLines(spec: IoSpec & { fd: number }, data: Buffer | string): string[] {
  const buf = Buffer.from(data);
  const tid = spec.tid ?? spec.pid;
  return [`W ${spec.ts} ${spec.pid} ${tid} ${spec.fd} ${spec.file} ${buf.length}${cpuField(spec)}`, ...payloadChunks(tid, buf, spec.cpu)];
}

export interface ExitSpec {
  ts: number;
  pid: number;
  start: number;
  /** Normal exit code (default 0); ignored when `signal` is set. */
  code?: number;
  signal?: number;
  /** The R, W and U records the tracer says it printed for the process; left out, as a tracer before the field. */
  ioRecords?: number;
  /** The tasks its leader cloned (printed only with ioRecords); left out, as a tracer before the field. */
  clones?: number;
}

/** Q for a process ended by exit_group (SIGNAL_GROUP_EXIT set, as the fixtures show). */
export function exitLine(spec: ExitSpec): string {
  const status = spec.signal !== undefined ? spec.signal : (spec.code ?? 0) << 8;
  const counts = spec.ioRecords === undefined ? '' : ` ${spec.ioRecords}${spec.clones === undefined ? '' : ` ${spec.clones}`}`;
  return `Q ${spec.ts} ${spec.pid} ${spec.start} ${status} ${status} 4${counts}`;
}

/** clone_flags as the tracer prints them: a pthread's (CLONE_THREAD among them) and a fork's. */
export const CLONE_FLAGS = { thread: 0x3d0f00, process: 0x1200011 } as const;

/** F: a fork or clone by `ppid`; `clone` left out, as a tracer before clone_flags printed it. */
export function forkLine(ts: number, ppid: number, child: number, clone?: keyof typeof CLONE_FLAGS): string {
  return `F ${ts} ${ppid} ${child}${clone === undefined ? '' : ` ${CLONE_FLAGS[clone]}`}`;
}

/**
 * T for a thread's end: as the oldest tracers print it (tid only), or, given
 * `ended`, with its time, its process and the payload records it printed
 * (and, when `start` is given, its start time and the tasks it cloned).
 */
export function threadExitLine(tid: number, ended?: { ts: number; pid: number; ioRecords: number; start?: number; clones?: number }): string {
  if (ended === undefined) return `T ${tid}`;
  return `T ${tid} ${ended.ts} ${ended.pid} ${ended.ioRecords}${ended.start === undefined ? '' : ` ${ended.start} ${ended.clones ?? 0}`}`;
}

export function helloLine(mode: 'full' | 'light', ts = 1_000_000): string {
  return `H 1 ${mode} ${ts}`;
}

/** The CNI_* entries of an ordinary ADD, for synthetic traces. */
export const SAMPLE_CNI_ENV: Readonly<Record<string, string>> = {
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'c1',
  CNI_NETNS: '/var/run/netns/x',
  CNI_IFNAME: 'eth0',
  CNI_ARGS: 'K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p',
  CNI_PATH: '/opt/cni/bin',
};
