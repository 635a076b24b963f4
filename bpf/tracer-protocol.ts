/**
 * The line protocol spoken by bpf/cnirec.bt: one record a line, its kind in
 * the first column, fields separated by single spaces. This file is the one
 * place that defines it; the .bt file's header points here.
 *
 * | kind | fields                                                              | meaning |
 * |------|---------------------------------------------------------------------|---------|
 * | H    | version mode ts                                                     | tracer up (BEGIN) |
 * | X    | ts cpu×2^22+pid ppid[+-] start in_file out_file err_file arg_bytes block_bytes path… | traced exec; `+`: its parent is traced too (`-`: not; neither: a tracer before the mark); path is the rest of the line |
 * | P    | cpu×2^22+pid comm…                                                  | the exec's parent's name (rest of the line) |
 * | B    | cpu×2^22+pid off hex                                                | 200 bytes of the exec's argv+env block from off (off may be < 0) |
 * | F    | ts ppid child clone_flags                                           | fork/clone by a traced process; CLONE_THREAD in clone_flags: the child is a thread of ppid |
 * | R    | ts pid tid fd file len cpu                                          | len bytes read from the call's stdin; D lines follow |
 * | W    | ts pid tid fd file len cpu                                          | len bytes written to its stdout/stderr; D lines follow |
 * | U    | ts pid tid R|W fd file len                                          | len bytes moved on such a file and not taken (see below) |
 * | D    | cpu×2^22+tid off hex                                                | 200 bytes of the thread's current R/W payload on that CPU, from off |
 * | Q    | ts pid start exit_code group_exit_code signal_flags io_records clones | last thread of a traced process exited; io_records and clones: its leader's (see below) |
 * | T    | tid ts pid io_records start clones                                  | a traced non-leader thread of process pid exited (or exec'd, leaving its tid), having printed io_records and cloned `clones` tasks (ts: since the sequencer orders it behind the thread's fork); start: the thread's start time (the process's for a thread that exec'd), which names the end across tid reuse |
 * | N    | cpu×2^22+pid len off hex                                            | 200 bytes of the exec's path (len bytes in all) from off: only when X's was cut |
 * | C    | cpu×2^22+pid depth hex                                              | a name of a relative exec's working directory, depth 0 the innermost; empty: the root |
 * | G    | ts pid tid old_fd new_fd                                            | the process copied old_fd to new_fd (dup, dup2, dup3, fcntl F_DUPFD): counted in io_records |
 * | Lost N events                                                              || bpftrace dropped N records |
 * | K    | ts pid tid hex                                                      | the kernel's extack text for a request of this thread (to its NUL), every mode |
 * | L    | ts pid tid netns len                                                | a netlink request (NETLINK_ROUTE; sendto, or sendmsg's first iovec) of len bytes on a socket of that netns (inode) |
 * | M    | ts off×2^22+tid hex                                                 | up to 200 bytes of the request with that ts and tid, from off (the first NETLINK_CAP_BYTES) |
 * | A    | ts pid tid error seq type                                           | the kernel's ack (NLMSG_ERROR) of request seq of that type: error 0 or -errno |
 * | I    | ts pid tid seq index lo hi                                          | the kernel's description of link index (answer to request seq): its name, 16 bytes as two little-endian words |
 * | O    | ts pid tid netns fd path…                                           | a /proc/sys file opened for writing on fd, by a thread in that netns |
 * | Y    | ts pid tid fd len lo hi                                             | len bytes written to a sysctl fd: the first 16 as two little-endian words |
 *
 * file is the open file (the kernel's struct file, an opaque number; 0 when
 * the fd had none): a dup of stdout on fd 3 is the same file, a second
 * open of /dev/null is not. X gives the files of fds 0, 1 and 2 at exec.
 * R and W come from syscall exit with the bytes really moved (read, write,
 * pread64, pwrite64; readv/writev as one R/W per iovec, the first 2, as musl's stdio uses); U
 * counts what went by uncaptured: iovecs past the 2nd, recvfrom, recvmsg,
 * sendfile, sendto, sendmsg, splice, vmsplice, preadv/pwritev(2), copy_file_range
 * (sendfile, splice and copy_file_range: one U per side that is the call's). (Output of versions before
 * had inodes where files are now, and R without its fd.)
 *
 * ts are the kernel's monotonic nanoseconds (CLOCK_MONOTONIC); start is the
 * process's start time on the same clock and, with pid, names a process
 * across pid reuse. hex is `\xNN` per byte (bpftrace's %rx). A chunk always
 * holds 200 bytes; where a payload is shorter, only its first `len - off`
 * bytes count. Payloads are captured up to 64 KiB per syscall and exec
 * blocks up to 64 KiB: a larger `len` means the rest was cut.
 *
 * A header and the chunk lines that follow it (B, and P, N, C after X; D
 * after R and W; M after L) make one frame (tracer-frames.ts): the collector
 * puts them together at its edge, and nothing after that sees a chunk line.
 *
 * cpu is the CPU whose buffer a header and its D lines went through (one
 * probe run never changes CPU; D lines carry it above the tid, for want of
 * BPF stack for one more field). bpftrace drains one CPU's buffer at a time,
 * and may hand over part of it, then another CPU's: a thread's next
 * read/write, made on another CPU, can then come between a payload's D
 * lines. D lines go with the thread's newest header on the same CPU.
 * An exec's lines (X, P, N, C, B) carry their CPU above the pid the same
 * way: two execs of one pid (exec in place, or the pid reused) printed on
 * two CPUs can come interleaved, and each line goes with the exec of its
 * own CPU. A pid with no CPU above it is CPU 0, or a tracer before the field.
 *
 * io_records counts the R, W, U and G headers one thread printed (0 in
 * light mode), counted per thread, so exact (a thread runs on one CPU at a
 * time; one count per process missed a bump when two threads printed at
 * once): Q carries the leader's, each T its thread's. A process's records
 * are its Q's count plus its threads' T counts; the collector holds the call
 * until that many came, as they may trail the exit from other CPUs' buffers.
 * clones counts, the same way, the tasks (threads and processes) one thread
 * cloned: a process's F lines are as many as its Q and T lines say, so the
 * collector knows which children to wait for, and through their F lines
 * which of them are threads, whose ends (with their counts) it waits for.
 * Lines of earlier versions without cpu or io_records still parse (the field
 * left out), and so do F lines without clone_flags (the child may be a
 * thread or a process), Q lines without clones, and T lines without start
 * and clones, without ts, or without pid and io_records.
 */

/** Iovecs of one readv/writev taken (bpf/program.ts repeats the probe this many times). */
export const IOV_LIMIT = 2;
export const CHUNK_BYTES = 200;
export const PAYLOAD_CAP_BYTES = 65_536;
export const EXEC_BLOCK_CAP_BYTES = 65_536;
/** The longest path the X line holds whole; N lines follow from this length on. */
export const EXEC_HEADER_PATH_BYTES = 199;
/** The longest path an N line series holds: PATH_MAX, all the kernel takes. */
export const EXEC_PATH_CAP_BYTES = 4096;
/** Bytes of a netlink request the tracer sends (M lines); a longer one is cut, its `len` the real one. */
export const NETLINK_CAP_BYTES = 1200;
/** Bytes of a sysctl write taken (Y lines: two 64-bit words; the BPF stack holds no more there). */
export const SYSCTL_VALUE_BYTES = 16;
/** Steps the working directory walk of a relative exec takes at most (names and mount points). */
export const CWD_WALK_STEPS = 32;

export type CaptureMode = 'full' | 'light';

/**
 * How full mode takes payloads: `syscall-exit` (one probe at syscall exit,
 * the bytes really moved; the default) or `syscall-entry` (the older
 * read/write probes, what was attempted: the fallback when the saved user
 * registers are not where the exit probe looks).
 */
export type PayloadPath = 'syscall-exit' | 'syscall-entry';

/** Microseconds on the kernel's monotonic clock, with the ns as a fraction. */
export type MonoMicros = number;

export type TracerRecord =
  | { kind: 'hello'; version: number; mode: CaptureMode; ts: MonoMicros }
  | {
      kind: 'exec';
      ts: MonoMicros;
      pid: number;
      ppid: number;
      /**
       * The parent is traced too (a delegate or a helper of a traced process), so this
       * exec is not a call of its own even when its parent's exec record never came.
       * Absent: false, or a tracer before the mark.
       */
      parentTraced?: boolean;
      start: string;
      /** The open files of fds 0, 1, 2 at exec (struct file; inodes in older output). */
      stdioFiles: readonly [string, string, string];
      argBytes: number;
      blockBytes: number;
      path: string;
      /** The CPU whose buffer its lines went through (absent: CPU 0, or a tracer before the field). */
      cpu?: number;
    }
  | { kind: 'exec-chunk'; pid: number; cpu?: number; off: number; data: Buffer }
  | { kind: 'exec-parent'; pid: number; cpu?: number; comm: string }
  /**
   * A fork or clone by traced process `ppid`. `thread`: the child is a thread
   * of `ppid` (CLONE_THREAD), not a process; absent in older output, where
   * either may be.
   */
  | { kind: 'fork'; ts: MonoMicros; ppid: number; pid: number; thread?: boolean }
  | { kind: 'read'; ts: MonoMicros; pid: number; tid: number; fd: number; file: string; len: number; cpu?: number }
  | { kind: 'write'; ts: MonoMicros; pid: number; tid: number; fd: number; file: string; len: number; cpu?: number }
  | { kind: 'uncaptured'; ts: MonoMicros; pid: number; tid: number; direction: 'read' | 'write'; fd: number; file: string; len: number }
  | { kind: 'data-chunk'; tid: number; cpu?: number; off: number; data: Buffer }
  | {
      kind: 'exit';
      ts: MonoMicros;
      pid: number;
      start: string;
      exitCode: number;
      groupExitCode: number;
      signalFlags: number;
      /** R, W, U and G headers its leader printed (its other threads' are on their thread-exit); absent when the tracer did not say. */
      ioRecords?: number;
      /** Tasks (threads and processes) its leader cloned: F lines of this process; absent when the tracer did not say. */
      clones?: number;
    }
  /**
   * A traced non-leader thread ended (ts absent in older output: it then
   * passes unordered). pid and ioRecords (the R, W, U and G headers the
   * thread printed), start (the thread's start time: with tid, it names
   * this end) and clones (the tasks it cloned) absent in older output.
   */
  | { kind: 'thread-exit'; tid: number; ts?: MonoMicros; pid?: number; ioRecords?: number; start?: string; clones?: number }
  /** N: part of an exec's path, which has `len` bytes. */
  | { kind: 'exec-path-chunk'; pid: number; cpu?: number; len: number; off: number; data: Buffer }
  /** C: a name of a relative exec's working directory, `depth` steps below it; empty for the root. */
  | { kind: 'exec-cwd-name'; pid: number; cpu?: number; depth: number; name: Buffer }
  /** G: the process copied `oldFd` to `newFd`: which of the call's streams an fd stands for follows. */
  | { kind: 'fd-copy'; ts: MonoMicros; pid: number; tid: number; oldFd: number; newFd: number }
  | { kind: 'lost'; count: number }
  | { kind: 'noise' }
  /** K: the kernel's extack message for a netlink request of this thread (every mode). */
  | { kind: 'extack'; ts: MonoMicros; pid: number; tid: number; message: string }
  /** L: a netlink route request of `len` bytes (sendto, or sendmsg's first iovec) sent on a socket of netns `netns` (an inode); M lines carry its bytes. */
  | { kind: 'netlink-send'; ts: MonoMicros; pid: number; tid: number; netns: string; len: number }
  /** M: bytes of the request sent at `ts` by `tid`, from `off`. */
  | { kind: 'netlink-chunk'; ts: MonoMicros; tid: number; off: number; data: Buffer }
  /** A: the kernel's answer to request `seq` (of netlink message type `requestType`): 0 or -errno. */
  | { kind: 'netlink-ack'; ts: MonoMicros; pid: number; tid: number; error: number; seq: number; requestType: number }
  /** I: the kernel told (answering request `seq`) that link `index` is named `name`. */
  | { kind: 'link-name'; ts: MonoMicros; pid: number; tid: number; seq: number; index: number; name: string }
  /** O: `path` under /proc/sys opened for writing on `fd` by a thread of netns `netns`. */
  | { kind: 'sysctl-open'; ts: MonoMicros; pid: number; tid: number; netns: string; fd: number; path: string }
  /** Y: `len` bytes written to the sysctl open on `fd`; `value` their first SYSCTL_VALUE_BYTES. */
  | { kind: 'sysctl-write'; ts: MonoMicros; pid: number; tid: number; fd: number; len: number; value: Buffer };

/** The records of an exec's lines (X, P, N, C, B): they carry the CPU they went through. */
export type ExecLineRecord = Extract<TracerRecord, { kind: 'exec' | 'exec-parent' | 'exec-chunk' | 'exec-path-chunk' | 'exec-cwd-name' }>;

/**
 * How many chunk lines follow a header in the tracer's output: B lines after
 * an exec, D lines after a read or write, M lines after a netlink request
 * (bpf/cnirec.bt's chunk loops: one per 200 bytes started, up to the cap). 0
 * for other records. An exec's P, N and C lines are not counted: they come
 * before its B chunks.
 */
export function expectedChunks(rec: TracerRecord): number {
  switch (rec.kind) {
    case 'exec':
      return Math.ceil(Math.min(rec.blockBytes, EXEC_BLOCK_CAP_BYTES) / CHUNK_BYTES);
    case 'read':
    case 'write':
      return Math.ceil(Math.min(rec.len, PAYLOAD_CAP_BYTES) / CHUNK_BYTES);
    case 'netlink-send':
      return Math.ceil(Math.min(rec.len, NETLINK_CAP_BYTES) / CHUNK_BYTES);
    default:
      return 0;
  }
}

export type ParseErrorReason =
  | 'unknown-kind'
  | 'field-count'
  | 'bad-number'
  | 'bad-hex'
  | 'bad-mode';

/** A line that does not follow the protocol. Carries no line content: env blocks may hold secrets. */
export class TracerLineError extends Error {
  constructor(
    readonly reason: ParseErrorReason,
    readonly recordKind: string,
    readonly lineLength: number,
  ) {
    super(`malformed tracer line (${reason}, kind ${JSON.stringify(recordKind)}, ${lineLength} bytes)`);
    this.name = 'TracerLineError';
  }
}

export type ParseResult = { ok: true; record: TracerRecord } | { ok: false; error: TracerLineError };

const UNSIGNED = /^\d{1,20}$/;
const SIGNED = /^-?\d{1,20}$/;
const LOST = /^Lost (\d{1,20}) events$/;

// bpftrace's own chatter on stdout, not records; `@` starts the map dump it prints as it stops.
const NOISE_PREFIXES = ['Attaching ', 'WARNING:', '@'];

const KIND_D = 68;
const KIND_B = 66;
const SPACE = 32;
const MINUS = 45;

/**
 * A chunk line (D, B) read where it lies: its header's id (pid or tid) and
 * the CPU above it, the offset, and where its hex begins. The bytes stay
 * undecoded: the collector's framer decodes them straight into the frame
 * they belong to (decodeHexInto), nearly all of the tracer's output.
 */
export interface ChunkLine {
  exec: boolean;
  id: number;
  cpu: number;
  off: number;
  hexFrom: number;
}

/**
 * Reads a D or B line's fields into `into`; false when it is no such line,
 * or its numbers are malformed (parseTracerBytes says how). Its hex is not
 * checked here.
 */
export function readChunkLine(line: Buffer, into: ChunkLine): boolean {
  const kind = line[0];
  if ((kind !== KIND_D && kind !== KIND_B) || line[1] !== SPACE) return false;
  const id = readUint(line, 2);
  const idEnd = cursor;
  const negative = kind === KIND_B && line[idEnd + 1] === MINUS;
  const off = idEnd > 0 && line[idEnd] === SPACE ? readUint(line, idEnd + (negative ? 2 : 1)) : 0;
  const offEnd = cursor;
  if (idEnd < 0 || offEnd < 0 || line[idEnd] !== SPACE || line[offEnd] !== SPACE) return false;
  const tid = id % TID_SPACE;
  into.exec = kind === KIND_B;
  into.id = tid;
  into.cpu = (id - tid) / TID_SPACE;
  into.off = negative ? -off : off;
  into.hexFrom = offEnd + 1;
  return true;
}

/**
 * Decodes the `\xNN` hex of `line` from `from` into `target`: the bytes of
 * indexes [skip, skip + count) of what the hex holds go to `target` at `at`.
 * All of the hex is checked first; false, and `target` untouched, when it is
 * malformed.
 */
export function decodeHexInto(line: Buffer, from: number, target: Buffer, at: number, skip: number, count: number): boolean {
  const len = line.length - from;
  if (len <= 0 || len % 4 !== 0) return false;
  if (hexScratch.length < len / 4) hexScratch = Buffer.allocUnsafe(len / 4);
  let bad = 0;
  for (let i = from, o = 0; i < line.length; i += 4, o++) {
    const v = HEX_PAIR[line[i + 2]! | (line[i + 3]! << 8)]!;
    bad |= (line[i]! ^ BACKSLASH) | (line[i + 1]! ^ LETTER_X) | (v & 0x8000);
    hexScratch[o] = v;
  }
  if (bad !== 0) return false;
  if (count > 0) hexScratch.copy(target, at, skip, skip + count);
  return true;
}

/** What decodeHexInto decodes into before it knows the hex is sound (a chunk's 200 bytes; more only for a malformed line). */
let hexScratch = Buffer.allocUnsafe(200);

/** How many bytes the hex of `line` from `from` holds (a chunk always holds 200). */
export function hexBytes(line: Buffer, from: number): number {
  return (line.length - from) / 4;
}

/**
 * Parses one line as bytes. The chunk lines (D, B), nearly all of the
 * tracer's output, are read straight from the bytes; others go through
 * `parseTracerLine`.
 */
export function parseTracerBytes(line: Buffer): ParseResult {
  const kind = line[0];
  if ((kind === KIND_D || kind === KIND_B) && line[1] === SPACE) {
    if (!readChunkLine(line, scratch)) return chunkError(kind, 'bad-number', line);
    const data = decodeHexBytes(line, scratch.hexFrom);
    if (data === null) return chunkError(kind, 'bad-hex', line);
    const cpu = scratch.cpu > 0 ? { cpu: scratch.cpu } : {};
    return {
      ok: true,
      record: scratch.exec ? { kind: 'exec-chunk', pid: scratch.id, ...cpu, off: scratch.off, data } : { kind: 'data-chunk', tid: scratch.id, ...cpu, off: scratch.off, data },
    };
  }
  return parseTracerLine(line.toString('utf8'));
}

const scratch: ChunkLine = { exec: false, id: 0, cpu: 0, off: 0, hexFrom: 0 };

/** The kinds of the lines that follow a header (D, B, P, N, C, M), as their first byte. */
const FOLLOWER_KINDS = new Set([KIND_D, KIND_B, 80, 78, 67, 77]);

/** Whether a line follows a header (D, B, P, N, C, M): it carries no time of its own. */
export function followsHeader(line: Buffer): boolean {
  return line[1] === SPACE && FOLLOWER_KINDS.has(line[0]!);
}

/** clone(2)'s CLONE_THREAD: the new task is a thread of its parent's process. */
const CLONE_THREAD = 0x10000;

/** Pids and tids stay below 2^22 (the kernel's pid_max limit): a D line's CPU sits above its tid. */
export const TID_SPACE = 4_194_304;

/** A D line's first number is cpu × 2^22 + tid (a tracer before the cpu field printed the tid alone: cpu 0). */
function dataChunk(threadOnCpu: number, off: number, data: Buffer): TracerRecord {
  const tid = threadOnCpu % TID_SPACE;
  const cpu = (threadOnCpu - tid) / TID_SPACE;
  return cpu > 0 ? { kind: 'data-chunk', tid, cpu, off, data } : { kind: 'data-chunk', tid, off, data };
}

/**
 * An exec line's record with the CPU its first number carries above the pid
 * (cpu × 2^22 + pid; the pid alone from a tracer before the field: CPU 0,
 * left out as for D lines).
 */
function withCpu(rec: ExecLineRecord, pidOnCpu: number): ExecLineRecord {
  const cpu = (pidOnCpu - (pidOnCpu % TID_SPACE)) / TID_SPACE;
  return cpu > 0 ? { ...rec, cpu } : rec;
}

function chunkError(kind: number, reason: ParseErrorReason, line: Buffer): ParseResult {
  return { ok: false, error: new TracerLineError(reason, String.fromCharCode(kind), line.length) };
}

/** Where readUint stopped (the index after the digits), -1 when it found none or too many. */
let cursor = -1;

/** The same numbers `uint` takes (1 to 20 digits, a safe integer), read from bytes. */
function readUint(buf: Buffer, pos: number): number {
  let i = pos;
  let value = 0;
  while (i < buf.length) {
    const c = buf[i]! - 48;
    if (c < 0 || c > 9) break;
    value = value * 10 + c;
    i++;
  }
  cursor = i === pos || i - pos > 20 || !Number.isSafeInteger(value) ? -1 : i;
  return value;
}

function decodeHexBytes(buf: Buffer, from: number): Buffer | null {
  const len = buf.length - from;
  if (len <= 0 || len % 4 !== 0) return null;
  const out = Buffer.allocUnsafe(len / 4);
  for (let i = from, o = 0; i < buf.length; i += 4, o++) {
    const v = HEX_PAIR[buf[i + 2]! | (buf[i + 3]! << 8)]!;
    if (buf[i] !== BACKSLASH || buf[i + 1] !== LETTER_X || v < 0) return null;
    out[o] = v;
  }
  return out;
}

/**
 * Parses one line of tracer output. Pure and total: every input gives a
 * record or a typed error, never an exception.
 *
 * Hand-validated rather than through zod: this runs for every 200-byte chunk
 * (hundreds of thousands of lines a second under load); the checks are the
 * same a schema would make.
 */
export function parseTracerLine(line: string): ParseResult {
  const kind = line.length > 0 ? line[0]! : '';
  const fail = (reason: ParseErrorReason): ParseResult => ({
    ok: false,
    error: new TracerLineError(reason, kind, line.length),
  });
  if (line.length === 0) return { ok: true, record: { kind: 'noise' } };
  if (line.length > 1 && line[1] !== ' ') {
    const lost = LOST.exec(line);
    if (lost) {
      const count = Number(lost[1]);
      // A count past 2^53 is no count bpftrace printed, and would make the lost-records total inexact.
      return Number.isSafeInteger(count) ? { ok: true, record: { kind: 'lost', count } } : fail('bad-number');
    }
    if (NOISE_PREFIXES.some((p) => line.startsWith(p))) return { ok: true, record: { kind: 'noise' } };
    return fail('unknown-kind');
  }
  try {
    return { ok: true, record: parseFields(kind, line) };
  } catch (err) {
    if (err instanceof FieldError) return fail(err.reason);
    throw err;
  }
}

class FieldError extends Error {
  constructor(readonly reason: ParseErrorReason) {
    super(reason);
  }
}

function parseFields(kind: string, line: string): TracerRecord {
  switch (kind) {
    case 'D': {
      const [id, off, hex] = splitN(line, 3);
      return dataChunk(uint(id), uint(off), decodeHex(hex));
    }
    case 'B': {
      const [id, off, hex] = splitN(line, 3);
      const packed = uint(id);
      return withCpu({ kind: 'exec-chunk', pid: packed % TID_SPACE, off: int(off), data: decodeHex(hex) }, packed);
    }
    case 'P': {
      const [pid, comm] = splitN(line, 2);
      const packed = uint(pid);
      return withCpu({ kind: 'exec-parent', pid: packed % TID_SPACE, comm: comm ?? '' }, packed);
    }
    case 'R':
    case 'W': {
      const f = between(line, 6, 7);
      const rec = { kind: kind === 'R' ? ('read' as const) : ('write' as const), ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), fd: uint(f[3]), file: inode(f[4]), len: uint(f[5]) };
      return f.length === 7 ? { ...rec, cpu: uint(f[6]) } : rec;
    }
    case 'U': {
      const f = exact(line, 7);
      if (f[3] !== 'R' && f[3] !== 'W') throw new FieldError('bad-number');
      return {
        kind: 'uncaptured',
        ts: micros(f[0]!),
        pid: uint(f[1]),
        tid: uint(f[2]),
        direction: f[3] === 'R' ? 'read' : 'write',
        fd: uint(f[4]),
        file: inode(f[5]),
        len: uint(f[6]),
      };
    }
    case 'X': {
      const f = splitN(line, 10);
      const path = f[9];
      if (path === undefined || path.length === 0) throw new FieldError('field-count');
      const packed = uint(f[1]);
      const mark = f[2]!.at(-1);
      const parentTraced = mark === '+';
      const exec: ExecLineRecord = {
        kind: 'exec',
        ts: micros(f[0]!),
        pid: packed % TID_SPACE,
        ppid: uint(mark === '+' || mark === '-' ? f[2]!.slice(0, -1) : f[2]),
        ...(parentTraced ? { parentTraced } : {}),
        start: inode(f[3]),
        stdioFiles: [inode(f[4]), inode(f[5]), inode(f[6])],
        argBytes: uint(f[7]),
        blockBytes: uint(f[8]),
        path,
      };
      return withCpu(exec, packed);
    }
    case 'F': {
      const f = between(line, 3, 4);
      const fork = { kind: 'fork' as const, ts: micros(f[0]!), ppid: uint(f[1]), pid: uint(f[2]) };
      return f.length === 4 ? { ...fork, thread: (Math.floor(uint(f[3]) / CLONE_THREAD) & 1) === 1 } : fork;
    }
    case 'Q': {
      const f = between(line, 6, 8);
      const exit = {
        kind: 'exit' as const,
        ts: micros(f[0]!),
        pid: uint(f[1]),
        start: inode(f[2]),
        exitCode: int(f[3]),
        groupExitCode: int(f[4]),
        signalFlags: uint(f[5]),
      };
      if (f.length === 6) return exit;
      return f.length === 8 ? { ...exit, ioRecords: uint(f[6]), clones: uint(f[7]) } : { ...exit, ioRecords: uint(f[6]) };
    }
    case 'G': {
      const f = exact(line, 5);
      return { kind: 'fd-copy', ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), oldFd: uint(f[3]), newFd: uint(f[4]) };
    }
    case 'T': {
      const f = between(line, 1, 6);
      // T tid (oldest), T tid ts, T tid ts pid io_records, T tid ts pid io_records start clones.
      if (f.length === 3 || f.length === 5) throw new FieldError('field-count');
      if (f.length === 1) return { kind: 'thread-exit', tid: uint(f[0]) };
      const ended = { kind: 'thread-exit' as const, tid: uint(f[0]), ts: micros(f[1]!) };
      if (f.length === 2) return ended;
      const counted = { ...ended, pid: uint(f[2]), ioRecords: uint(f[3]) };
      return f.length === 6 ? { ...counted, start: inode(f[4]), clones: uint(f[5]) } : counted;
    }
    case 'N': {
      const [pid, len, off, hex] = splitN(line, 4);
      const packed = uint(pid);
      return withCpu({ kind: 'exec-path-chunk', pid: packed % TID_SPACE, len: uint(len), off: int(off), data: decodeHex(hex) }, packed);
    }
    case 'C': {
      const [pid, depth, hex] = splitN(line, 3);
      const packed = uint(pid);
      return withCpu({ kind: 'exec-cwd-name', pid: packed % TID_SPACE, depth: uint(depth), name: hex === '' ? Buffer.alloc(0) : decodeHex(hex) }, packed);
    }
    case 'K': {
      const [ts, pid, tid, hex] = splitN(line, 4);
      const bytes = decodeHex(hex);
      const nul = bytes.indexOf(0);
      return { kind: 'extack', ts: micros(ts!), pid: uint(pid), tid: uint(tid), message: bytes.subarray(0, nul < 0 ? bytes.length : nul).toString('utf8') };
    }
    case 'L': {
      const f = exact(line, 5);
      return { kind: 'netlink-send', ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), netns: inode(f[3]), len: uint(f[4]) };
    }
    case 'M': {
      const [ts, offTid, hex] = splitN(line, 3);
      const packed = uint(offTid);
      const tid = packed % TID_SPACE;
      return { kind: 'netlink-chunk', ts: micros(ts!), tid, off: (packed - tid) / TID_SPACE, data: decodeHex(hex) };
    }
    case 'A': {
      const f = exact(line, 6);
      return { kind: 'netlink-ack', ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), error: int(f[3]), seq: uint(f[4]), requestType: uint(f[5]) };
    }
    case 'I': {
      const f = exact(line, 7);
      const name = Buffer.alloc(16);
      name.writeBigUInt64LE(word(f[5]), 0);
      name.writeBigUInt64LE(word(f[6]), 8);
      const nul = name.indexOf(0);
      return { kind: 'link-name', ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), seq: uint(f[3]), index: int(f[4]), name: name.subarray(0, nul < 0 ? 16 : nul).toString('latin1') };
    }
    case 'O': {
      const [ts, pid, tid, netns, fd, path] = splitN(line, 6);
      if (path === undefined || path.length === 0) throw new FieldError('field-count');
      return { kind: 'sysctl-open', ts: micros(ts!), pid: uint(pid), tid: uint(tid), netns: inode(netns), fd: uint(fd), path };
    }
    case 'Y': {
      const f = exact(line, 7);
      const value = Buffer.alloc(SYSCTL_VALUE_BYTES);
      value.writeBigUInt64LE(word(f[5]), 0);
      value.writeBigUInt64LE(word(f[6]), 8);
      const len = uint(f[4]);
      return { kind: 'sysctl-write', ts: micros(f[0]!), pid: uint(f[1]), tid: uint(f[2]), fd: uint(f[3]), len, value: value.subarray(0, Math.min(len, SYSCTL_VALUE_BYTES)) };
    }
    case 'H': {
      const f = exact(line, 3);
      const mode = f[1];
      if (mode !== 'full' && mode !== 'light') throw new FieldError('bad-mode');
      return { kind: 'hello', version: uint(f[0]), mode, ts: micros(f[2]!) };
    }
    default:
      throw new FieldError('unknown-kind');
  }
}

/** The n space-separated fields after the kind; the last one takes the rest of the line. */
function splitN(line: string, n: number): string[] {
  const out: string[] = [];
  let pos = 2;
  for (let i = 0; i < n - 1; i++) {
    const sp = line.indexOf(' ', pos);
    if (sp < 0) throw new FieldError('field-count');
    out.push(line.slice(pos, sp));
    pos = sp + 1;
  }
  out.push(line.slice(pos));
  return out;
}

/** From `min` to `max` fields: the last ones were added by a later version. */
function between(line: string, min: number, max: number): string[] {
  const f = line.slice(2).split(' ');
  if (f.length < min || f.length > max) throw new FieldError('field-count');
  return f;
}

function exact(line: string, n: number): string[] {
  const f = line.slice(2).split(' ');
  if (f.length !== n) throw new FieldError('field-count');
  return f;
}

function uint(s: string | undefined): number {
  if (s === undefined || !UNSIGNED.test(s)) throw new FieldError('bad-number');
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new FieldError('bad-number');
  return n;
}

function int(s: string | undefined): number {
  if (s === undefined || !SIGNED.test(s)) throw new FieldError('bad-number');
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new FieldError('bad-number');
  return n;
}

/** A 64-bit word (bpftrace's %llu) as a bigint. */
function word(s: string | undefined): bigint {
  if (s === undefined || !UNSIGNED.test(s)) throw new FieldError('bad-number');
  const n = BigInt(s);
  if (n >= 1n << 64n) throw new FieldError('bad-number');
  return n;
}

/** Opaque 64-bit identifiers (files, inodes, start times) stay exact as strings. */
function inode(s: string | undefined): string {
  if (s === undefined || !UNSIGNED.test(s)) throw new FieldError('bad-number');
  return s;
}

/** Nanoseconds as text to microseconds: exact to the microsecond for any uptime. */
function micros(s: string): MonoMicros {
  if (!UNSIGNED.test(s)) throw new FieldError('bad-number');
  if (s.length <= 3) return Number(s) / 1000;
  return Number(s.slice(0, -3)) + Number(s.slice(-3)) / 1000;
}

// Value of each ASCII hex digit, -1 for anything else.
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[65 + i] = 10 + i;
  HEX_VALUE[97 + i] = 10 + i;
}
// The byte a pair of hex digits stands for, by the two characters' codes (the first in the low byte): one
// lookup per byte in the hot loop instead of two; -1 for a pair that is not two hex digits.
const HEX_PAIR = new Int16Array(65_536).fill(-1);
for (let a = 0; a < 128; a++) {
  for (let b = 0; b < 128; b++) if (HEX_VALUE[a]! >= 0 && HEX_VALUE[b]! >= 0) HEX_PAIR[a | (b << 8)] = (HEX_VALUE[a]! << 4) | HEX_VALUE[b]!;
}
const BACKSLASH = 92;
const LETTER_X = 120;

/** `\xNN` per byte to bytes: the hot loop of the collector, hence by hand. A chunk is never empty. */
function decodeHex(hex: string | undefined): Buffer {
  if (hex === undefined || hex.length === 0 || hex.length % 4 !== 0) throw new FieldError('bad-hex');
  const out = Buffer.allocUnsafe(hex.length / 4);
  for (let i = 0, o = 0; i < hex.length; i += 4, o++) {
    const hi = HEX_VALUE[hex.charCodeAt(i + 2)] ?? -1;
    const lo = HEX_VALUE[hex.charCodeAt(i + 3)] ?? -1;
    if (hex.charCodeAt(i) !== BACKSLASH || hex.charCodeAt(i + 1) !== LETTER_X || hi < 0 || lo < 0) {
      throw new FieldError('bad-hex');
    }
    out[o] = (hi << 4) | lo;
  }
  return out;
}
