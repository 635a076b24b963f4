import { describe, expect, it } from 'vitest';
import {
  CHUNK_BYTES,
  expectedChunks,
  parseTracerLine,
  TracerLineError,
  type ParseErrorReason,
  type TracerRecord,
} from '../../bpf/tracer-protocol.js';
import { traceLines } from '../support/replay.js';
import { hex } from '../support/tracer-lines.js';

const chunk = (text: string): Buffer => {
  const b = Buffer.alloc(CHUNK_BYTES);
  b.write(text, 'latin1');
  return b;
};
const HELLO = chunk('{"cniVersion":"1.0.0"}');
const HELLO_HEX = hex(HELLO);

function parsed(line: string): TracerRecord {
  const r = parseTracerLine(line);
  if (!r.ok) throw new Error(`unexpected parse error: ${r.error.message}`);
  return r.record;
}

function failed(line: string): TracerLineError {
  const r = parseTracerLine(line);
  if (r.ok) throw new Error(`expected a parse error, got ${r.record.kind}`);
  return r.error;
}

describe('parseTracerLine: every record kind', () => {
  const cases: Array<[string, string, TracerRecord]> = [
    ['hello, full', 'H 1 full 2170392537929', { kind: 'hello', version: 1, mode: 'full', ts: 2170392537.929 }],
    ['hello, light', 'H 1 light 2188025690693', { kind: 'hello', version: 1, mode: 'light', ts: 2188025690.693 }],
    [
      'exec (recorded)',
      'X 2171194026282 10218 10211 2171193719020 15571 15572 15573 24 507 /usr/lib/cni/host-local',
      {
        kind: 'exec',
        ts: 2171194026.282,
        pid: 10218,
        ppid: 10211,
        start: '2171193719020',
        stdioFiles: ['15571', '15572', '15573'],
        argBytes: 24,
        blockBytes: 507,
        path: '/usr/lib/cni/host-local',
      },
    ],
    [
      'exec, path with spaces, 64-bit inodes kept exact',
      'X 5 7 1 4 18446744073709551615 2 3 10 20 /opt/cni/bin/my plugin',
      {
        kind: 'exec',
        ts: 0.005,
        pid: 7,
        ppid: 1,
        start: '4',
        stdioFiles: ['18446744073709551615', '2', '3'],
        argBytes: 10,
        blockBytes: 20,
        path: '/opt/cni/bin/my plugin',
      },
    ],
    ['exec chunk', `B 10841 200 ${HELLO_HEX}`, { kind: 'exec-chunk', pid: 10841, off: 200, data: HELLO }],
    ['exec chunk from before the block', `B 10841 -50 ${HELLO_HEX}`, { kind: 'exec-chunk', pid: 10841, off: -50, data: HELLO }],
    // An exec's lines carry their CPU above the pid (cpu × 2^22 + pid): CPU 3 here.
    [
      'exec on CPU 3',
      'X 5000 12590413 1 4 5 6 7 10 20 /opt/cni/bin/bridge',
      { kind: 'exec', ts: 5, pid: 7501, cpu: 3, ppid: 1, start: '4', stdioFiles: ['5', '6', '7'], argBytes: 10, blockBytes: 20, path: '/opt/cni/bin/bridge' },
    ],
    ['exec chunk on CPU 3', `B 12590413 -50 ${HELLO_HEX}`, { kind: 'exec-chunk', pid: 7501, cpu: 3, off: -50, data: HELLO }],
    ['exec parent on CPU 3', 'P 12590413 containerd', { kind: 'exec-parent', pid: 7501, cpu: 3, comm: 'containerd' }],
    ['exec path chunk on CPU 3', `N 12590413 258 58 ${HELLO_HEX}`, { kind: 'exec-path-chunk', pid: 7501, cpu: 3, len: 258, off: 58, data: HELLO }],
    ['cwd name on CPU 3', 'C 12590413 3 ', { kind: 'exec-cwd-name', pid: 7501, cpu: 3, depth: 3, name: Buffer.alloc(0) }],
    ['fork (a tracer before clone_flags)', 'F 2171188522770 10211 10212', { kind: 'fork', ts: 2171188522.77, ppid: 10211, pid: 10212 }],
    ['fork of a process (clone_flags of a fork)', 'F 2171188522770 10211 10212 18874368', { kind: 'fork', ts: 2171188522.77, ppid: 10211, pid: 10212, thread: false }],
    ['clone of a thread (CLONE_THREAD in clone_flags)', 'F 2171188522770 10211 10213 4001536', { kind: 'fork', ts: 2171188522.77, ppid: 10211, pid: 10213, thread: true }],
    [
      'read',
      'R 2171190206229 10211 10213 0 15553 197',
      { kind: 'read', ts: 2171190206.229, pid: 10211, tid: 10213, fd: 0, file: '15553', len: 197 },
    ],
    [
      'read through a dup of stdin',
      'R 2171190206229 10211 10213 3 18446612689159645056 197',
      { kind: 'read', ts: 2171190206.229, pid: 10211, tid: 10213, fd: 3, file: '18446612689159645056', len: 197 },
    ],
    [
      'write through a dup of stdout on fd 3',
      'W 2171202874345 10211 10211 3 18446612690190347456 546',
      { kind: 'write', ts: 2171202874.345, pid: 10211, tid: 10211, fd: 3, file: '18446612690190347456', len: 546 },
    ],
    [
      'bytes written and not taken (iovecs past the limit, sendmsg)',
      'U 692525805573 18581 18581 W 1 18446612689721325248 2',
      { kind: 'uncaptured', ts: 692525805.573, pid: 18581, tid: 18581, direction: 'write', fd: 1, file: '18446612689721325248', len: 2 },
    ],
    [
      'write to stdout',
      'W 2171202874345 10211 10211 1 2147224 546',
      { kind: 'write', ts: 2171202874.345, pid: 10211, tid: 10211, fd: 1, file: '2147224', len: 546 },
    ],
    [
      'write to stderr',
      'W 2179297171658 10663 10663 2 15476 0',
      { kind: 'write', ts: 2179297171.658, pid: 10663, tid: 10663, fd: 2, file: '15476', len: 0 },
    ],
    ['data chunk', `D 10211 0 ${HELLO_HEX}`, { kind: 'data-chunk', tid: 10211, off: 0, data: HELLO }],
    [
      'exit (exit 1)',
      'Q 2175211873150 10510 2175206794356 256 256 4',
      { kind: 'exit', ts: 2175211873.15, pid: 10510, start: '2175206794356', exitCode: 256, groupExitCode: 256, signalFlags: 4 },
    ],
    [
      'exit (SIGKILL)',
      'Q 2182860494489 10766 2182747008139 9 9 4',
      { kind: 'exit', ts: 2182860494.489, pid: 10766, start: '2182747008139', exitCode: 9, groupExitCode: 9, signalFlags: 4 },
    ],
    [
      'exit with its leader’s payload records and clones',
      'Q 2182860494489 10766 2182747008139 0 0 4 5 2',
      { kind: 'exit', ts: 2182860494.489, pid: 10766, start: '2182747008139', exitCode: 0, groupExitCode: 0, signalFlags: 4, ioRecords: 5, clones: 2 },
    ],
    ['thread exit (oldest form)', 'T 10220', { kind: 'thread-exit', tid: 10220 }],
    ['thread exit with its time', 'T 10220 2175211873150', { kind: 'thread-exit', tid: 10220, ts: 2175211873.15 }],
    [
      'thread exit with its process and payload records',
      'T 10220 2175211873150 10210 3',
      { kind: 'thread-exit', tid: 10220, ts: 2175211873.15, pid: 10210, ioRecords: 3 },
    ],
    [
      'thread exit with its start time and the tasks it cloned',
      'T 10220 2175211873150 10210 3 2175211000456 1',
      { kind: 'thread-exit', tid: 10220, ts: 2175211873.15, pid: 10210, ioRecords: 3, start: '2175211000456', clones: 1 },
    ],
    ['exec parent (recorded)', 'P 9160 bash', { kind: 'exec-parent', pid: 9160, comm: 'bash' }],
    ['exec parent, comm with a space', 'P 7 kworker/u8 x', { kind: 'exec-parent', pid: 7, comm: 'kworker/u8 x' }],
    // As bpf/cnirec.bt printed them for `./plug` run from a 253-byte deep directory, and for a 258-byte path.
    ['exec path chunk', `N 15374 258 58 ${HELLO_HEX}`, { kind: 'exec-path-chunk', pid: 15374, len: 258, off: 58, data: HELLO }],
    ['exec path chunk of a 199-byte path, from before it', `N 15374 199 -1 ${HELLO_HEX}`, { kind: 'exec-path-chunk', pid: 15374, len: 199, off: -1, data: HELLO }],
    ['cwd name', 'C 15376 1 \\x6c\\x69\\x62', { kind: 'exec-cwd-name', pid: 15376, depth: 1, name: Buffer.from('lib') }],
    ['cwd name with a space and a newline', 'C 15376 0 \\x61\\x20\\x0a', { kind: 'exec-cwd-name', pid: 15376, depth: 0, name: Buffer.from('a \n') }],
    ['cwd root', 'C 15376 3 ', { kind: 'exec-cwd-name', pid: 15376, depth: 3, name: Buffer.alloc(0) }],
    ['lost events', 'Lost 12 events', { kind: 'lost', count: 12 }],
    ['lost events, one', 'Lost 1 events', { kind: 'lost', count: 1 }],
  ];

  it.each(cases)('%s', (_name, line, record) => {
    expect(parsed(line)).toEqual(record);
  });

  it('keeps ts exact to the nanosecond fraction for short and long values', () => {
    expect(parsed('F 0 1 2')).toMatchObject({ ts: 0 });
    expect(parsed('F 999 1 2')).toMatchObject({ ts: 0.999 });
    expect(parsed('F 1000 1 2')).toMatchObject({ ts: 1 });
    // 200 days of uptime in ns: still exact to the µs (the ns fraction is approximate).
    const { ts } = parsed('F 17280000000123456 1 2') as Extract<TracerRecord, { kind: 'fork' }>;
    expect(Math.floor(ts)).toBe(17_280_000_000_123);
    expect(ts - 17_280_000_000_123).toBeCloseTo(0.456, 2);
  });
});

describe('parseTracerLine: bpftrace noise', () => {
  it.each([
    ['empty line (bpftrace prints one per map as it stops)', ''],
    ['attach banner', 'Attaching 10 probes...'],
    ['attach banner, light mode', 'Attaching 7 probes...'],
    ['warning', 'WARNING: could not resolve symbol'],
    // Recorded with the program before its END clear(@cni): bpftrace 0.17 dumps
    // every non-empty map as it stops, here a plugin that still ran.
    ['map dump at exit', '@cni[16312]: 1'],
    ['map dump of the read buffers', '@rbuf[16400]: 140737488347136'],
  ])('%s', (_name, line) => {
    expect(parsed(line)).toEqual({ kind: 'noise' });
  });
});

describe('parseTracerLine: malformed lines', () => {
  const cases: Array<[string, string, ParseErrorReason]> = [
    // unknown kind
    ['unknown one-letter kind', 'Z 1 2 3', 'unknown-kind'],
    ['a heartbeat line of old versions (K now carries the kernel extack text)', 'K 2171194026282 1', 'field-count'],
    ['lower-case kind', 'x 1 2 3', 'unknown-kind'],
    ['a word, not a kind', 'Hello world', 'unknown-kind'],
    ['lost without a number', 'Lost events', 'unknown-kind'],
    ['lost with a negative number', 'Lost -3 events', 'unknown-kind'],
    ['a lone letter that is no kind', 'q', 'unknown-kind'],
    // field count
    ['fork, too few', 'F 1 2', 'field-count'],
    ['fork, too many', 'F 1 2 3 4 5', 'field-count'],
    ['fork, double space', 'F 1  2 3 4', 'field-count'],
    ['hello, too few', 'H 1 full', 'field-count'],
    ['read, too few', 'R 1 2 3 4 5', 'field-count'],
    ['write, too few', 'W 1 2 3 1 5', 'field-count'],
    ['exit, too few', 'Q 1 2 3 4 5', 'field-count'],
    ['exit, too many', 'Q 1 2 3 4 5 6 7 8 9', 'field-count'],
    ['thread exit, pid without its count', 'T 1 2 3', 'field-count'],
    ['thread exit, start without clones', 'T 1 2 3 4 5', 'field-count'],
    ['thread exit, too many', 'T 1 2 3 4 5 6 7', 'field-count'],
    ['exec without a path', 'X 1 2 3 4 5 6 7 8 9', 'field-count'],
    ['exec with an empty path', 'X 1 2 3 4 5 6 7 8 9 ', 'field-count'],
    ['exec chunk without data', 'B 1 2', 'field-count'],
    ['data chunk without data', 'D 1', 'field-count'],
    ['bare kind', 'X', 'field-count'],
    // bad numbers
    ['thread exit, no tid', 'T', 'bad-number'],
    ['thread exit, word', 'T abc', 'bad-number'],
    ['fork, word', 'F 1 2 x', 'bad-number'],
    ['fork, negative ts', 'F -1 2 3', 'bad-number'],
    ['fork, trailing space', 'F 1 2 ', 'bad-number'],
    ['fork, beyond 2^53', 'F 1 2 99999999999999999999', 'bad-number'],
    ['fork, 21 digits', 'F 1 2 123456789012345678901', 'bad-number'],
    ['read, fractional len', 'R 1 2 3 0 4 1.5', 'bad-number'],
    ['exit, word code', 'Q 1 2 3 x 0 4', 'bad-number'],
    ['exit, negative flags', 'Q 1 2 3 0 0 -4', 'bad-number'],
    ['hello, word version', 'H x full 1', 'bad-number'],
    ['exec, word pid', 'X 1 pid 3 4 5 6 7 8 9 /bin/x', 'bad-number'],
    ['exec, hex inode', 'X 1 2 3 4 0x5 6 7 8 9 /bin/x', 'bad-number'],
    ['data chunk, negative offset', `D 1 -5 ${HELLO_HEX}`, 'bad-number'],
    ['exec chunk, word offset', `B 1 x ${HELLO_HEX}`, 'bad-number'],
    // bad hex
    ['odd hex (short escape)', 'D 1 0 \\x4', 'bad-hex'],
    ['odd hex (last escape short)', 'D 1 0 \\x41\\x4', 'bad-hex'],
    ['non-hex digits', 'D 1 0 \\x4g', 'bad-hex'],
    ['non-hex escape', 'B 1 0 \\xzz\\x41', 'bad-hex'],
    ['hex without escapes', 'D 1 0 41424344', 'bad-hex'],
    ['text, not hex', 'B 1 0 PASSWORD=hunter2!', 'bad-hex'],
    // bad mode
    ['hello, unknown mode', 'H 1 medium 5', 'bad-mode'],
  ];

  it.each(cases)('%s → %s', (_name, line, reason) => {
    const err = failed(line);
    expect(err).toBeInstanceOf(TracerLineError);
    expect(err.reason).toBe(reason);
    expect(err.lineLength).toBe(line.length);
    expect(err.recordKind).toBe(line.slice(0, 1));
    expect(err.name).toBe('TracerLineError');
  });

  it('never throws, whatever the line (truncations and corruptions of real lines)', () => {
    const real = [
      'X 2171194026282 10218 10211 2171193719020 15571 15572 15573 24 507 /usr/lib/cni/host-local',
      `D 10211 0 ${HELLO_HEX}`,
      'Q 2175211873150 10510 2175206794356 256 256 4',
      'W 2171202874345 10211 10211 1 2147224 546',
      'Lost 12 events',
      'H 1 full 2170392537929',
    ];
    for (const line of real) {
      for (let n = 0; n <= line.length; n += line.length > 100 ? 7 : 1) {
        for (const variant of [line.slice(0, n), line.slice(0, n) + '\u0000' + line.slice(n + 1), line.slice(0, n) + ' ' + line.slice(n)]) {
          const r = parseTracerLine(variant);
          expect(typeof r.ok).toBe('boolean');
        }
      }
    }
  });
});

describe('parseTracerLine: errors carry no line content', () => {
  const SECRET = 'hunter2-s3cr3t';
  const lines = [
    `${SECRET}=value`,
    `AWS_SECRET_ACCESS_KEY=${SECRET}`,
    `B 1 0 ${SECRET}`,
    `D 1 0 \\x41${SECRET}`,
    `X 1 2 3 4 5 6 7 8 ${SECRET} /usr/lib/cni/${SECRET}`,
    `F 1 2 ${SECRET}`,
    `H 1 ${SECRET} 5`,
    `Q 1 2 3 ${SECRET} 0 4`,
    `W 1 2 3 ${SECRET} 5 6`,
  ];

  it.each(lines)('%#', (line) => {
    const err = failed(line);
    for (const text of [err.message, String(err), err.stack ?? '', JSON.stringify(err), JSON.stringify(Object.values(err))]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('hunter');
    }
    // What it does say: the reason, the kind letter and the length.
    expect(err.message).toContain(err.reason);
    expect(err.message).toContain(`${line.length} bytes`);
  });
});

describe('parseTracerLine on the recorded fixtures', () => {
  it('parses every line of every fixture and sees every record kind', () => {
    const kinds = new Set<string>();
    for (const name of ['bridge.trace', 'failing.trace', 'shell.trace', 'sigkill.trace', 'version.trace', 'light.trace', 'running.trace']) {
      for (const line of traceLines(name)) {
        const r = parseTracerLine(line);
        expect(r.ok, `${name}: ${line.slice(0, 40)}`).toBe(true);
        if (r.ok) kinds.add(r.record.kind);
      }
    }
    for (const kind of ['data-chunk', 'exec', 'exec-chunk', 'exit', 'fork', 'hello', 'noise', 'read', 'thread-exit', 'write']) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it('says how many chunk lines follow each header, as the recorded tracer printed them', () => {
    for (const name of ['bridge.trace', 'failing.trace', 'shell.trace', 'sigkill.trace', 'version.trace', 'light.trace', 'running.trace']) {
      // Chunk lines of a header come from its own CPU, so per pid/tid they follow it in order.
      const open = new Map<string, { expect: number; got: number; line: string }>();
      const check = (key: string) => {
        const h = open.get(key);
        if (h) expect(h.got, `${name}: ${h.line.slice(0, 60)}`).toBe(h.expect);
      };
      for (const line of traceLines(name)) {
        const r = parseTracerLine(line);
        if (!r.ok) continue;
        const rec = r.record;
        if (rec.kind === 'exec' || rec.kind === 'read' || rec.kind === 'write') {
          const key = rec.kind === 'exec' ? `B${rec.pid}` : `D${rec.tid}`;
          check(key);
          open.set(key, { expect: expectedChunks(rec), got: 0, line });
        } else if (rec.kind === 'exec-chunk' || rec.kind === 'data-chunk') {
          const h = open.get(rec.kind === 'exec-chunk' ? `B${rec.pid}` : `D${rec.tid}`);
          if (h) h.got++;
        }
      }
      for (const key of open.keys()) check(key);
    }
    expect(expectedChunks({ kind: 'write', ts: 1, pid: 1, tid: 1, fd: 1, file: '1', len: 0 })).toBe(0);
    expect(expectedChunks({ kind: 'read', ts: 1, pid: 1, tid: 1, fd: 0, file: '1', len: 1_000_000 })).toBe(328);
  });

  it('chunks hold 200 bytes each', () => {
    for (const line of traceLines('bridge.trace')) {
      const r = parseTracerLine(line);
      if (r.ok && (r.record.kind === 'data-chunk' || r.record.kind === 'exec-chunk')) expect(r.record.data.length).toBe(CHUNK_BYTES);
    }
  });
});

describe('parseTracerLine: what a call did to the kernel (K, L, M, A, O, Y)', () => {
  it('reads the kernel extack text up to its NUL, dropping what lay behind it', () => {
    const text = Buffer.concat([Buffer.from('mtu greater than device maximum\0'), Buffer.from('bin/junk\0\0')]);
    expect(parsed(`K 2337901820954 11099 11100 ${hex(text)}`)).toEqual({
      kind: 'extack',
      ts: 2337901820.954,
      pid: 11099,
      tid: 11100,
      message: 'mtu greater than device maximum',
    });
  });

  it('reads a netlink request header and its chunks, the offset above the tid', () => {
    expect(parsed('L 2337714500817 11062 11065 4026532177 124')).toEqual({ kind: 'netlink-send', ts: 2337714500.817, pid: 11062, tid: 11065, netns: '4026532177', len: 124 });
    const data = Buffer.from([1, 2, 3]);
    expect(parsed(`M 2337714500817 ${200 * 4_194_304 + 11065} ${hex(data)}`)).toEqual({ kind: 'netlink-chunk', ts: 2337714500.817, tid: 11065, off: 200, data });
  });

  it('reads an ack with a negative errno', () => {
    expect(parsed('A 2337901956437 11099 11099 -22 1 16')).toEqual({ kind: 'netlink-ack', ts: 2337901956.437, pid: 11099, tid: 11099, error: -22, seq: 1, requestType: 16 });
  });

  it('reads a sysctl open and the value written, cut to its length', () => {
    expect(parsed('O 2337745577072 11062 11065 4026532177 9 /proc/sys/net/ipv6/conf/eth0/accept_dad')).toEqual({
      kind: 'sysctl-open', ts: 2337745577.072, pid: 11062, tid: 11065, netns: '4026532177', fd: 9, path: '/proc/sys/net/ipv6/conf/eth0/accept_dad',
    });
    const y = parsed('Y 2337745672290 11062 11065 9 1 48 0');
    expect(y).toMatchObject({ kind: 'sysctl-write', fd: 9, len: 1 });
    expect(y.kind === 'sysctl-write' && y.value.toString()).toBe('0');
    const long = parsed(`Y 1 2 3 4 20 ${Buffer.from('12345678').readBigUInt64LE()} ${Buffer.from('abcdefgh').readBigUInt64LE()}`);
    expect(long.kind === 'sysctl-write' && long.value.toString()).toBe('12345678abcdefgh');
  });

  it.each([
    ['K without text', 'K 1 2 3', 'field-count'],
    ['K with bad hex', 'K 1 2 3 \\xzz', 'bad-hex'],
    ['L short', 'L 1 2 3 4', 'field-count'],
    ['A with a word for errno', 'A 1 2 3 x 1 16', 'bad-number'],
    ['O without path', 'O 1 2 3 4 5', 'field-count'],
    ['Y past 64 bits', 'Y 1 2 3 4 1 18446744073709551616 0', 'bad-number'],
  ])('%s → a typed error', (_name, line, reason) => {
    expect(failed(line).reason).toBe(reason);
  });

  it('parses every line of the recorded bridge ADD/DEL and the refused mtu', () => {
    const kinds = new Set<string>();
    for (const line of traceLines('changes-bridge-full.trace')) {
      const r = parseTracerLine(line);
      expect(r.ok, line.slice(0, 40)).toBe(true);
      if (r.ok) kinds.add(r.record.kind);
    }
    for (const kind of ['extack', 'netlink-send', 'netlink-chunk', 'netlink-ack', 'sysctl-open', 'sysctl-write']) expect(kinds, kind).toContain(kind);
  });
});
