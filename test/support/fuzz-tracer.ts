/**
 * fast-check arbitraries for tracer output: valid lines of every record kind
 * (with the record the parser must make of them), lines made invalid on
 * purpose (each mutation is one the protocol forbids, so the test knows the
 * line must be counted as malformed), garbage, and streams of well-formed
 * records with the semantics scrambled (duplicate pids, exits without execs,
 * out-of-order delivery, wrong chunk offsets, huge lengths).
 */

import fc from 'fast-check';
import { CHUNK_BYTES, type TracerRecord } from '../../bpf/tracer-protocol.js';
import { execBlock, hex } from './tracer-lines.js';

/** What a field must look like: the parser's rules differ per field. */
type FieldType = 'big' | 'uint' | 'int' | 'fd' | 'mode' | 'hex' | 'rest';

interface Field {
  readonly text: string;
  readonly type: FieldType;
}

/** A protocol line as fields, so it can be printed as is or mutated field by field. */
export interface LineModel {
  readonly kind: string;
  readonly fields: readonly Field[];
  /** Fields after the kind are exactly these (no "rest of the line" field): one more or less is an error. */
  readonly exact: boolean;
  /** Its last field was added by a later tracer version: the line without one field still parses (as the older form). */
  readonly grown?: boolean;
}

export const lineText = (m: LineModel): string => `${m.kind} ${m.fields.map((f) => f.text).join(' ')}`;

/** A line and what parsing it must give: a record, or an error (`invalid`). */
export type LineCase =
  | { readonly line: string; readonly invalid: false; readonly expect: TracerRecord; readonly note: string }
  | { readonly line: string; readonly invalid: true; readonly note: string };

// ---- valid lines ------------------------------------------------------------

// Below PID_MAX_LIMIT (2^22): a D line carries its CPU above the tid.
const pid = fc.integer({ min: 1, max: 4_194_303 });
const smallUint = fc.integer({ min: 0, max: 1_000_000 });
/** Monotonic ns as text: realistic uptimes, and the 20-digit extreme. */
const nsText = fc.oneof(
  fc.bigInt({ min: 1n, max: 10n ** 15n }).map(String),
  fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }).map(String),
);
const inodeText = fc.oneof(fc.constantFrom('0', '1000', '63311'), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String));
const int32 = fc.integer({ min: -2_147_483_648, max: 2_147_483_647 });
/** Paths and names without spaces that could read as numbers once a field before them is dropped. */
const word = fc.stringMatching(/^[a-zA-Z_/.][a-zA-Z0-9_/.:-]{0,40}$/);
const chunk = fc.uint8Array({ minLength: CHUNK_BYTES, maxLength: CHUNK_BYTES }).map((a) => Buffer.from(a));

const micros = (ns: string): number => Number(ns) / 1000;
const f = (text: string | number, type: FieldType): Field => ({ text: String(text), type });

export interface ValidLine {
  readonly model: LineModel;
  readonly expect: TracerRecord;
}

const hello = fc.record({ version: smallUint, mode: fc.constantFrom('full', 'light') as fc.Arbitrary<'full' | 'light'>, ts: nsText }).map(
  (r): ValidLine => ({
    model: { kind: 'H', exact: true, fields: [f(r.version, 'uint'), f(r.mode, 'mode'), f(r.ts, 'big')] },
    expect: { kind: 'hello', version: r.version, mode: r.mode, ts: micros(r.ts) },
  }),
);

/** An exec line's first number: the CPU above the pid (cpu 0: as tracers before the cpu printed it). */
const onCpu = (r: { pid: number; cpu: number }): number => r.cpu * 4_194_304 + r.pid;
const cpuOf = (cpu: number): { cpu?: number } => (cpu > 0 ? { cpu } : {});
const execCpu = fc.nat({ max: 4095 });

const exec = fc
  .record({ ts: nsText, pid, cpu: execCpu, ppid: pid, traced: fc.constantFrom('', '+', '-'), start: inodeText, io: fc.tuple(inodeText, inodeText, inodeText), arg: smallUint, block: smallUint, path: word })
  .map(
    (r): ValidLine => ({
      model: {
        kind: 'X',
        exact: false,
        fields: [
          f(r.ts, 'big'),
          f(onCpu(r), 'uint'),
          f(`${r.ppid}${r.traced}`, 'uint'),
          f(r.start, 'big'),
          f(r.io[0], 'big'),
          f(r.io[1], 'big'),
          f(r.io[2], 'big'),
          f(r.arg, 'uint'),
          f(r.block, 'uint'),
          f(r.path, 'rest'),
        ],
      },
      expect: { kind: 'exec', ts: micros(r.ts), pid: r.pid, ppid: r.ppid, ...(r.traced === '+' ? { parentTraced: true } : {}), start: r.start, stdioFiles: r.io, argBytes: r.arg, blockBytes: r.block, path: r.path, ...cpuOf(r.cpu) },
    }),
  );

const parent = fc.record({ pid, cpu: execCpu, comm: fc.oneof(word, fc.constant('')) }).map(
  (r): ValidLine => ({
    model: { kind: 'P', exact: false, fields: [f(onCpu(r), 'uint'), f(r.comm, 'rest')] },
    expect: { kind: 'exec-parent', pid: r.pid, ...cpuOf(r.cpu), comm: r.comm },
  }),
);

const execChunk = fc.record({ pid, cpu: execCpu, off: fc.integer({ min: -199, max: 16_384 }), data: chunk }).map(
  (r): ValidLine => ({
    model: { kind: 'B', exact: false, fields: [f(onCpu(r), 'uint'), f(r.off, 'int'), f(hex(r.data), 'hex')] },
    // -0 and 0 are the same offset.
    expect: { kind: 'exec-chunk', pid: r.pid, ...cpuOf(r.cpu), off: r.off === 0 ? 0 : r.off, data: r.data },
  }),
);

const dataChunk = fc.record({ tid: pid, cpu: fc.nat({ max: 4095 }), off: fc.integer({ min: 0, max: 65_536 }), data: chunk }).map(
  (r): ValidLine => ({
    // The first number is cpu × 2^22 + tid (cpu 0: as tracers before the cpu printed it).
    model: { kind: 'D', exact: false, fields: [f(r.cpu * 4_194_304 + r.tid, 'uint'), f(r.off, 'uint'), f(hex(r.data), 'hex')] },
    expect: r.cpu > 0 ? { kind: 'data-chunk', tid: r.tid, cpu: r.cpu, off: r.off, data: r.data } : { kind: 'data-chunk', tid: r.tid, off: r.off, data: r.data },
  }),
);

/** clone_flags: a pthread's, a fork's, posix_spawn's, or any. */
const cloneFlags = fc.oneof(fc.constant(0x3d0f00), fc.constant(0x1200011), fc.constant(0x4111), smallUint);

const fork = fc.record({ ts: nsText, ppid: pid, pid, flags: cloneFlags }).map(
  (r): ValidLine => ({
    model: { kind: 'F', exact: true, grown: true, fields: [f(r.ts, 'big'), f(r.ppid, 'uint'), f(r.pid, 'uint'), f(r.flags, 'uint')] },
    expect: { kind: 'fork', ts: micros(r.ts), ppid: r.ppid, pid: r.pid, thread: (Math.floor(r.flags / 0x10000) & 1) === 1 },
  }),
);

/** An R or W header: the same fields, with the CPU its chunks come through last. */
function ioHeader(kind: 'R' | 'W'): fc.Arbitrary<ValidLine> {
  return fc.record({ ts: nsText, pid, tid: pid, fd: smallUint, file: inodeText, len: fc.oneof(smallUint, fc.maxSafeNat()), cpu: fc.nat({ max: 4095 }) }).map(
    (r): ValidLine => ({
      model: {
        kind,
        exact: true,
        grown: true,
        fields: [f(r.ts, 'big'), f(r.pid, 'uint'), f(r.tid, 'uint'), f(r.fd, 'uint'), f(r.file, 'big'), f(r.len, 'uint'), f(r.cpu, 'uint')],
      },
      expect: { kind: kind === 'R' ? 'read' : 'write', ts: micros(r.ts), pid: r.pid, tid: r.tid, fd: r.fd, file: r.file, len: r.len, cpu: r.cpu },
    }),
  );
}

const read = ioHeader('R');
const write = ioHeader('W');

const exit = fc.record({ ts: nsText, pid, start: inodeText, code: int32, group: int32, flags: smallUint, io: smallUint, clones: smallUint }).map(
  (r): ValidLine => ({
    model: {
      kind: 'Q',
      exact: true,
      grown: true,
      fields: [f(r.ts, 'big'), f(r.pid, 'uint'), f(r.start, 'big'), f(r.code, 'int'), f(r.group, 'int'), f(r.flags, 'uint'), f(r.io, 'uint'), f(r.clones, 'uint')],
    },
    expect: { kind: 'exit', ts: micros(r.ts), pid: r.pid, start: r.start, exitCode: r.code, groupExitCode: r.group, signalFlags: r.flags, ioRecords: r.io, clones: r.clones },
  }),
);

const threadExit = fc.record({ tid: pid, ts: nsText, pid, io: smallUint, start: inodeText, clones: smallUint }).map(
  (r): ValidLine => ({
    model: { kind: 'T', exact: true, grown: true, fields: [f(r.tid, 'uint'), f(r.ts, 'big'), f(r.pid, 'uint'), f(r.io, 'uint'), f(r.start, 'big'), f(r.clones, 'uint')] },
    expect: { kind: 'thread-exit', tid: r.tid, ts: micros(r.ts), pid: r.pid, ioRecords: r.io, start: r.start, clones: r.clones },
  }),
);

const execPathChunk = fc.record({ pid, cpu: execCpu, len: fc.integer({ min: 199, max: 4095 }), off: fc.integer({ min: -1, max: 4095 }), data: chunk }).map(
  (r): ValidLine => ({
    model: { kind: 'N', exact: false, fields: [f(onCpu(r), 'uint'), f(r.len, 'uint'), f(r.off, 'int'), f(hex(r.data), 'hex')] },
    expect: { kind: 'exec-path-chunk', pid: r.pid, ...cpuOf(r.cpu), len: r.len, off: r.off === 0 ? 0 : r.off, data: r.data },
  }),
);

/** A working directory's name (1 to 200 bytes, spaces and newlines too), or the empty name of the root. */
const execCwdName = fc.record({ pid, cpu: execCpu, depth: fc.integer({ min: 0, max: 32 }), name: fc.uint8Array({ minLength: 0, maxLength: 200 }).map((a) => Buffer.from(a)) }).map(
  (r): ValidLine => ({
    model: { kind: 'C', exact: false, fields: [f(onCpu(r), 'uint'), f(r.depth, 'uint'), f(hex(r.name), r.name.length > 0 ? 'hex' : 'rest')] },
    expect: { kind: 'exec-cwd-name', pid: r.pid, ...cpuOf(r.cpu), depth: r.depth, name: r.name },
  }),
);

export const validLine: fc.Arbitrary<ValidLine> = fc.oneof(hello, exec, parent, execChunk, dataChunk, fork, read, write, exit, threadExit, execPathChunk, execCwdName);

/** bpftrace's own lines: valid, not records (or the lost-records notice). */
export const chatterLine: fc.Arbitrary<LineCase> = fc.oneof(
  fc.nat({ max: 1_000_000_000 }).map((n): LineCase => ({ line: `Lost ${n} events`, invalid: false, expect: { kind: 'lost', count: n }, note: 'lost' })),
  fc.constantFrom('Attaching 12 probes...', 'WARNING: something odd', '@cni[1234]: 1', '').map((line): LineCase => ({ line, invalid: false, expect: { kind: 'noise' }, note: 'noise' })),
);

// ---- invalid lines ----------------------------------------------------------

const BAD_ANY_NUMBER = ['x', 'NaN', '1e3', '0x1f', '', '+1', '1.5', '-', '١٢', '99999999999999999999999', '12 ', ' 12'];
/** Bad tokens per field type: every one breaks the protocol for that field. */
const BAD_TOKENS: Readonly<Record<FieldType, readonly string[]>> = {
  big: [...BAD_ANY_NUMBER, '-1'],
  uint: [...BAD_ANY_NUMBER, '-1', '9007199254740993'],
  int: [...BAD_ANY_NUMBER, '9007199254740993', '-9007199254740993'],
  fd: [...BAD_ANY_NUMBER, '-1'],
  mode: ['fast', 'FULL', '', 'full2'],
  hex: [],
  rest: [],
};

const NON_KINDS = ['Z', 'x', '?', '1', '#', 'J', 'h'];

/** The ways a valid line is made invalid, each named for the failure message. */
export function invalidate(valid: ValidLine): fc.Arbitrary<LineCase> {
  const m = valid.model;
  const numeric = m.fields.map((fl, i) => [fl, i] as const).filter(([fl]) => BAD_TOKENS[fl.type].length > 0);
  const hexIndex = m.fields.findIndex((fl) => fl.type === 'hex');
  const options: Array<fc.Arbitrary<LineCase>> = [
    fc.constantFrom(...NON_KINDS).map((k) => bad(`${k}${lineText(m).slice(1)}`, `kind ${k}`)),
    fc.constant(bad(lineText(m).replace(' ', '  '), 'double space')),
  ];
  if (numeric.length > 0) {
    options.push(
      fc.tuple(fc.constantFrom(...numeric), fc.nat()).map(([[fl, i], n]) => {
        // A trailing space before a rest-of-line field only moves a space into that field.
        const tokens = BAD_TOKENS[fl.type].filter((t) => m.fields[i + 1]?.type !== 'rest' || !t.endsWith(' '));
        const token = tokens[n % tokens.length]!;
        return bad(lineText(withField(m, i, token)), `field ${i} = ${JSON.stringify(token)}`);
      }),
    );
  }
  // Dropping a field breaks a line (unless it then reads as an older version's form); so does adding one where the count is exact.
  const droppable = m.fields
    .map((_, i) => i)
    .filter((i) => (m.kind !== 'P' || m.fields[1]!.text !== '' || i !== 0) && (!m.grown || m.fields[i]!.type === 'hex'));
  if (droppable.length > 0) options.push(fc.constantFrom(...droppable).map((i) => bad(lineText({ ...m, fields: m.fields.filter((_, j) => j !== i) }), `field ${i} dropped`)));
  if (m.exact) options.push(fc.constant(bad(`${lineText(m)} 7`, 'extra field')));
  if (hexIndex >= 0) {
    const text = m.fields[hexIndex]!.text;
    options.push(
      fc.tuple(fc.nat({ max: text.length - 1 }), fc.constantFrom('g', 'G', 'z', ' ', 'X', '/', '\u00e9')).map(([at, ch]) => {
        // None of these is a hex digit, a backslash or a lowercase x: every one breaks `\xNN`.
        const mutated = `${text.slice(0, at)}${ch}${text.slice(at + 1)}`;
        return bad(lineText(withField(m, hexIndex, mutated)), `hex char ${at}`);
      }),
      fc.integer({ min: 1, max: 3 }).map((cut) => bad(lineText(withField(m, hexIndex, text.slice(0, -cut))), `hex cut by ${cut}`)),
    );
    // An empty name is the root of a C walk, a valid line.
    if (m.kind !== 'C') options.push(fc.constant(bad(lineText(withField(m, hexIndex, '')), 'empty hex')));
  }
  return fc.oneof(...options);
}

function withField(m: LineModel, i: number, text: string): LineModel {
  return { ...m, fields: m.fields.map((fl, j) => (j === i ? { ...fl, text } : fl)) };
}

const bad = (line: string, note: string): LineCase => ({ line, invalid: true, note });

/** Bytes that are no record: they start with something no record kind or bpftrace message starts with. */
export const garbageLine: fc.Arbitrary<{ readonly bytes: Buffer; readonly note: string }> = fc
  .tuple(
    fc.constantFrom(0x00, 0x01, 0x5a, 0x7f, 0x80, 0xc3, 0xfe, 0xff, 0x3f),
    fc.uint8Array({ maxLength: 300 }).map((a) => a.filter((b) => b !== 0x0a)),
  )
  .map(([first, rest]) => ({ bytes: Buffer.concat([Buffer.from([first]), Buffer.from(rest)]), note: `garbage ${first}` }));

export const validCase: fc.Arbitrary<LineCase> = validLine.map((v) => ({ line: lineText(v.model), invalid: false, expect: v.expect, note: `valid ${v.model.kind}` }));
export const invalidCase: fc.Arbitrary<LineCase> = validLine.chain(invalidate);

// ---- record streams for the assembler ----------------------------------------

/** Formats a record as bpf/cnirec.bt prints it (ts back to ns). */
export function formatRecord(rec: TracerRecord): string {
  const ns = (us: number) => String(Math.round(us * 1000));
  switch (rec.kind) {
    case 'hello':
      return `H ${rec.version} ${rec.mode} ${ns(rec.ts)}`;
    case 'exec':
      return `X ${ns(rec.ts)} ${pidOnCpu(rec)} ${rec.ppid}${rec.parentTraced === true ? '+' : ''} ${rec.start} ${rec.stdioFiles.join(' ')} ${rec.argBytes} ${rec.blockBytes} ${rec.path}`;
    case 'exec-parent':
      return `P ${pidOnCpu(rec)} ${rec.comm}`;
    case 'exec-chunk':
      return `B ${pidOnCpu(rec)} ${rec.off} ${hex(rec.data)}`;
    case 'fork':
      return `F ${ns(rec.ts)} ${rec.ppid} ${rec.pid}${rec.thread === undefined ? '' : ` ${rec.thread ? 0x3d0f00 : 0x1200011}`}`;
    case 'read':
      return `R ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.fd} ${rec.file} ${rec.len}`;
    case 'write':
      return `W ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.fd} ${rec.file} ${rec.len}`;
    case 'uncaptured':
      return `U ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.direction === 'read' ? 'R' : 'W'} ${rec.fd} ${rec.file} ${rec.len}`;
    case 'data-chunk':
      return `D ${(rec.cpu ?? 0) * 4_194_304 + rec.tid} ${rec.off} ${hex(rec.data)}`;
    case 'exit':
      return `Q ${ns(rec.ts)} ${rec.pid} ${rec.start} ${rec.exitCode} ${rec.groupExitCode} ${rec.signalFlags}${rec.ioRecords === undefined ? '' : ` ${rec.ioRecords}${rec.clones === undefined ? '' : ` ${rec.clones}`}`}`;
    case 'fd-copy':
      return `G ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.oldFd} ${rec.newFd}`;
    case 'thread-exit':
      if (rec.ts === undefined) return `T ${rec.tid}`;
      if (rec.pid === undefined || rec.ioRecords === undefined) return `T ${rec.tid} ${ns(rec.ts)}`;
      return `T ${rec.tid} ${ns(rec.ts)} ${rec.pid} ${rec.ioRecords}${rec.start === undefined ? '' : ` ${rec.start} ${rec.clones ?? 0}`}`;
    case 'exec-path-chunk':
      return `N ${pidOnCpu(rec)} ${rec.len} ${rec.off} ${hex(rec.data)}`;
    case 'exec-cwd-name':
      return `C ${pidOnCpu(rec)} ${rec.depth} ${hex(rec.name)}`;
    case 'lost':
      return `Lost ${rec.count} events`;
    case 'noise':
      return '';
    case 'extack':
      return `K ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${hex(Buffer.from(`${rec.message}\0`))}`;
    case 'netlink-send':
      return `L ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.netns} ${rec.len}`;
    case 'netlink-chunk':
      return `M ${ns(rec.ts)} ${rec.off * 4_194_304 + rec.tid} ${hex(rec.data)}`;
    case 'netlink-ack':
      return `A ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.error} ${rec.seq} ${rec.requestType}`;
    case 'link-name': {
      const n = Buffer.alloc(16);
      n.write(rec.name, 'latin1');
      return `I ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.seq} ${rec.index} ${n.readBigUInt64LE(0)} ${n.readBigUInt64LE(8)}`;
    }
    case 'sysctl-open':
      return `O ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.netns} ${rec.fd} ${rec.path}`;
    case 'sysctl-write': {
      const v = Buffer.alloc(16);
      rec.value.copy(v);
      return `Y ${ns(rec.ts)} ${rec.pid} ${rec.tid} ${rec.fd} ${rec.len} ${v.readBigUInt64LE(0)} ${v.readBigUInt64LE(8)}`;
    }
  }
}

/** An exec line's first number, as the tracer prints it. */
function pidOnCpu(rec: { pid: number; cpu?: number }): number {
  return (rec.cpu ?? 0) * 4_194_304 + rec.pid;
}

/** The 200-byte windows the tracer sends a payload or exec block as (see tracer-lines.ts). */
function chunksOf(data: Buffer, execBlock: boolean): Array<{ off: number; data: Buffer }> {
  const out: Array<{ off: number; data: Buffer }> = [];
  for (let off = 0; off < data.length; off += CHUNK_BYTES) {
    const start = off + CHUNK_BYTES > data.length && (execBlock || data.length >= CHUNK_BYTES) ? data.length - CHUNK_BYTES : off;
    const window = Buffer.alloc(CHUNK_BYTES);
    for (let i = 0; i < CHUNK_BYTES; i++) if (start + i >= 0 && start + i < data.length) window[i] = data[start + i]!;
    out.push({ off: start, data: window });
  }
  return out;
}

/** A small pid space, so processes collide: duplicate pids, exits of processes never exec'd, forks of strangers. */
const poolPid = fc.integer({ min: 100, max: 115 });
const poolStart = fc.constantFrom('5000', '5001', '5002');
const poolInode = fc.constantFrom('0', '1000', '1001', '1002', '77');
const path = fc.constantFrom('/opt/cni/bin/bridge', '/opt/cni/bin/host-local', '/usr/sbin/iptables', '/bin/sh', 'relative/tool', '/opt/cni/bin/a b');
const command = fc.constantFrom('ADD', 'DEL', 'CHECK', 'VERSION', '__cnirec_canary__', '', 'x\u0000y');
const podArgs = fc.constantFrom(
  'K8S_POD_NAMESPACE=demo;K8S_POD_NAME=web-0',
  'K8S_POD_NAMESPACE=;K8S_POD_NAME=x',
  "K8S_POD_NAMESPACE=' OR 1=1 --;K8S_POD_NAME=%_",
  'garbage',
);
/** Offsets a broken tracer (or a lost record) could leave: negative, past the end, unaligned. */
const wildOffset = fc.oneof(fc.integer({ min: -400, max: 70_000 }), fc.constantFrom(-200, 0, 65_536, 16_384));
const payload = fc.oneof(
  fc.uint8Array({ maxLength: 700 }).map((a) => Buffer.from(a)),
  fc.string({ maxLength: 300 }).map((s) => Buffer.from(s)),
);

/** One step of a process's life, as the records the tracer prints for it (offsets and lengths maybe wrong). */
const step: fc.Arbitrary<TracerRecord[]> = fc.oneof(
  fc
    .record({
      pid: poolPid,
      ppid: fc.oneof(poolPid, fc.constant(1)),
      start: poolStart,
      io: fc.tuple(poolInode, poolInode, poolInode),
      path,
      cmd: command,
      args: podArgs,
      extraArgv: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
      comm: fc.option(word, { nil: undefined }),
      breakOffsets: fc.boolean(),
      lieAboutSize: fc.option(fc.oneof(fc.nat({ max: 20_000 }), fc.maxSafeNat()), { nil: undefined }),
      offsets: fc.array(wildOffset, { maxLength: 3 }),
      // A relative exec's working directory, maybe without its root line (a walk cut short), maybe at wild depths.
      cwd: fc.option(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom('', 'opt', 'cni', 'a b', '..', 'x\ny')), { maxLength: 5 }), { nil: undefined }),
      // The whole path, as N lines, maybe with a length that is not the path's.
      longPath: fc.option(fc.tuple(fc.string({ minLength: 150, maxLength: 600 }), fc.option(fc.nat({ max: 5000 }), { nil: undefined })), { nil: undefined }),
    })
    .map((r) => {
      const env = { CNI_COMMAND: r.cmd, CNI_PATH: '/opt/cni/bin', CNI_ARGS: r.args, SECRET_TOKEN: 'hunter2', TRACEPARENT: '00-abc-def-01' };
      const { block, argBytes } = execBlock([r.path, ...r.extraArgv], env);
      const blockBytes = r.lieAboutSize ?? block.length;
      const recs: TracerRecord[] = [
        { kind: 'exec', ts: 0, pid: r.pid, ppid: r.ppid, start: r.start, stdioFiles: r.io, argBytes, blockBytes, path: r.path },
      ];
      if (r.comm !== undefined) recs.push({ kind: 'exec-parent', pid: r.pid, comm: r.comm });
      if (r.longPath) {
        const whole = Buffer.from(`/opt/${r.longPath[0]}`);
        for (const c of chunksOf(whole, true)) recs.push({ kind: 'exec-path-chunk', pid: r.pid, len: r.longPath[1] ?? whole.length, off: c.off, data: c.data });
      }
      for (const [depth, name] of r.cwd ?? []) recs.push({ kind: 'exec-cwd-name', pid: r.pid, depth, name: Buffer.from(name) });
      const chunks = chunksOf(block, true);
      chunks.forEach((c, i) => recs.push({ kind: 'exec-chunk', pid: r.pid, off: r.breakOffsets ? (r.offsets[i] ?? c.off) : c.off, data: c.data }));
      return recs;
    }),
  // A fork, or a thread's clone, marked or not (a tracer before the mark).
  fc.record({ ppid: poolPid, pid: fc.oneof(poolPid, fc.integer({ min: 200, max: 203 })), thread: fc.option(fc.boolean(), { nil: undefined }) }).map((r): TracerRecord[] => [
    { kind: 'fork', ts: 0, ppid: r.ppid, pid: r.pid, ...(r.thread === undefined ? {} : { thread: r.thread }) },
  ]),
  fc
    .record({
      pid: poolPid,
      tid: fc.oneof(poolPid, fc.integer({ min: 200, max: 203 })),
      fd: fc.constantFrom(0, 1, 2),
      inode: poolInode,
      data: payload,
      len: fc.option(fc.oneof(fc.nat({ max: 70_000 }), fc.maxSafeNat()), { nil: undefined }),
      // D offsets are unsigned in the protocol (a negative one is a malformed line, tested elsewhere).
      chunks: fc.option(fc.array(fc.tuple(wildOffset.map(Math.abs), chunk), { maxLength: 4 }), { nil: undefined }),
    })
    .map((r) => {
      const len = r.len ?? r.data.length;
      const head: TracerRecord =
        r.fd === 0
          ? { kind: 'read', ts: 0, pid: r.pid, tid: r.tid, fd: 0, file: r.inode, len }
          : { kind: 'write', ts: 0, pid: r.pid, tid: r.tid, fd: r.fd, file: r.inode, len };
      const chunks = r.chunks?.map(([off, data]) => ({ off, data })) ?? chunksOf(r.data, false);
      return [head, ...chunks.map((c): TracerRecord => ({ kind: 'data-chunk', tid: r.tid, off: c.off, data: c.data }))];
    }),
  fc
    .record({ pid: poolPid, start: poolStart, code: fc.oneof(fc.constantFrom(0, 256, 9, 0x8b), int32), flags: fc.constantFrom(0, 4, 0xffff), counts: fc.option(fc.tuple(fc.nat({ max: 3 }), fc.nat({ max: 2 })), { nil: undefined }) })
    .map((r): TracerRecord[] => [{ kind: 'exit', ts: 0, pid: r.pid, start: r.start, exitCode: r.code, groupExitCode: r.code, signalFlags: r.flags, ...(r.counts === undefined ? {} : { ioRecords: r.counts[0], clones: r.counts[1] }) }]),
  fc.oneof(poolPid, fc.integer({ min: 200, max: 203 })).map((tid): TracerRecord[] => [{ kind: 'thread-exit', tid }]),
  // A thread's end with its process, its count of payload records and its start time.
  fc.record({ tid: fc.oneof(poolPid, fc.integer({ min: 200, max: 203 })), pid: poolPid, io: fc.nat({ max: 3 }), start: poolStart, clones: fc.nat({ max: 2 }) }).map((r): TracerRecord[] => [
    { kind: 'thread-exit', tid: r.tid, ts: 0, pid: r.pid, ioRecords: r.io, start: r.start, clones: r.clones },
  ]),
  fc.nat({ max: 5 }).map((count): TracerRecord[] => [{ kind: 'lost', count }]),
  fc.constantFrom('full', 'light').map((mode): TracerRecord[] => [{ kind: 'hello', version: 1, mode: mode as 'full' | 'light', ts: 0 }]),
);

export interface ScrambledStream {
  /** The records in the order the tracer prints them. */
  readonly records: readonly TracerRecord[];
  /** Sum of the `Lost N events` counts in it. */
  readonly lost: number;
}

/**
 * Steps with timestamps: mostly rising by a few ms, sometimes stepping back
 * (another CPU's buffer) or jumping far ahead.
 */
export const scrambledStream: fc.Arbitrary<ScrambledStream> = fc
  .array(fc.tuple(step, fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 5_000 }) }, { weight: 1, arbitrary: fc.integer({ min: -3_000_000, max: 0 }) }, { weight: 1, arbitrary: fc.constant(5_000_000) })), {
    minLength: 1,
    maxLength: 60,
  })
  .map((steps) => {
    let ts = 1_000_000;
    const records: TracerRecord[] = [];
    let lost = 0;
    // A pid cannot exec twice in one µs: call ids (µs + pid) rely on it.
    const execAt = new Set<string>();
    for (const [recs, dt] of steps) {
      ts = Math.max(1, ts + dt);
      const head = recs[0]!;
      if (head.kind === 'exec') {
        while (execAt.has(`${head.pid}@${ts}`)) ts++;
        execAt.add(`${head.pid}@${ts}`);
      }
      for (const rec of recs) {
        if (rec.kind === 'lost') lost += rec.count;
        records.push('ts' in rec ? { ...rec, ts } : rec);
      }
    }
    return { records, lost };
  });
