// The framer, the record path's first stage: a header line and the chunk
// lines that carry its bytes become one whole frame, keyed by the CPU the
// lines went through (or, for a netlink request, by its tid and timestamp);
// and the run's canary proof, checked on whole frames.
import { describe, expect, it } from 'vitest';
import { RecordFramer, type Framed } from '../../collector/tracer/record-framer.js';
import { CANARY_OUTPUT } from '../../collector/tracer/canary-marks.js';
import { parseTracerLine, type TracerRecord } from '../../bpf/tracer-protocol.js';
import type { TracerFrame } from '../../bpf/index.js';
import { execLines, helloLine, hex, readLines, writeLines } from '../support/tracer-lines.js';
import { traceLines } from '../support/replay.js';

const ms = 1_000_000;

function parse(line: string): TracerRecord {
  const r = parseTracerLine(line);
  if (!r.ok) throw r.error;
  return r.record;
}

/** Lines through a framer; the frames it made, in order (those still open cut at the end when asked). */
function frame(lines: readonly string[], opts: { closeAll?: boolean; framer?: RecordFramer } = {}): TracerFrame[] {
  const framer = opts.framer ?? new RecordFramer();
  const out: Framed[] = [];
  for (const line of lines) framer.push(parse(line), 0, out);
  if (opts.closeAll) framer.closeAll(out);
  return out.map((f) => f.frame);
}

describe('RecordFramer', () => {
  it('makes a read whole from its D lines, a header on CPU 0 and chunk lines that carry no CPU above their tid', () => {
    const data = Buffer.from('x'.repeat(450));
    const [header, ...chunks] = readLines({ ts: 12 * ms, pid: 100, file: 7, cpu: 0 }, data);
    // CPU 0: the D lines print the tid alone, as a tracer before the field did.
    expect(chunks.every((l) => l.startsWith('D 100 '))).toBe(true);
    const frames = frame([header!, ...chunks]);
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ kind: 'read', len: 450, whole: true });
    expect(frames[0]!.kind === 'read' && frames[0]!.bytes.equals(data)).toBe(true);
  });

  it("puts a netlink request's M lines together by tid and timestamp, though the thread's next request came amid them", () => {
    const first = Buffer.alloc(300, 1);
    const second = Buffer.alloc(100, 2);
    const m = (ts: number, tid: number, off: number, bytes: Buffer) => `M ${ts} ${off * 4_194_304 + tid} ${hex(bytes)}`;
    const frames = frame([
      `L ${10 * ms} 100 101 4026531833 300`,
      m(10 * ms, 101, 0, first.subarray(0, 200)),
      // The thread's next request, through another CPU's buffer read in between.
      `L ${11 * ms} 100 101 4026531833 100`,
      m(11 * ms, 101, 0, Buffer.concat([second, Buffer.alloc(100)])),
      m(10 * ms, 101, 100, first.subarray(100, 300)),
    ]);
    expect(frames.map((f) => f.kind === 'netlink-send' && [f.ts, f.bytes.length, f.whole, f.bytes.equals(f.ts === 10_000 ? first : second)])).toEqual([
      [11_000, 100, true, true],
      [10_000, 300, true, true],
    ]);
  });

  it('hands every other line on as a frame of its own, and drops bpftrace’s chatter', () => {
    expect(frame(['F 1000 10 11', 'Lost 3 events', 'Attaching 42 probes...', `Q 2000 10 1 0 0 4 0`]).map((f) => f.kind)).toEqual(['fork', 'lost', 'exit']);
  });

  it('keeps the canary proof of its run: canary execs after its hello, the canary’s write checked whole', () => {
    const framer = new RecordFramer((pid, ppid) => ppid === 42 && pid >= 300);
    const canary = (pid: number, wrote: string, cut = false) => {
      const lines = [...execLines({ ts: pid * ms, pid, ppid: 42, start: pid * ms, path: '/usr/bin/echo' }), ...writeLines({ ts: (pid + 0.5) * ms, pid, fd: 1, file: 9 }, wrote)];
      return cut ? lines.slice(0, -1) : lines;
    };
    frame(canary(300, CANARY_OUTPUT), { framer });
    expect(framer.canary).toEqual({ execs: 0, writesRight: 1, writesWrong: 0 });
    frame([helloLine('full'), ...canary(301, CANARY_OUTPUT), ...canary(302, 'something else\n')], { framer });
    expect(framer.canary).toEqual({ execs: 2, writesRight: 2, writesWrong: 1 });
    // A canary write whose last chunk line was lost: not right, though what came of it is.
    frame(canary(303, 'x'.repeat(199) + CANARY_OUTPUT, true), { framer, closeAll: true });
    expect(framer.canary).toEqual({ execs: 3, writesRight: 2, writesWrong: 2 });
  });

  it('gives up an open frame, cut, at the next header of its thread on the same CPU, not at one on another CPU', () => {
    const data = Buffer.alloc(400, 5);
    const [h1, c1] = writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: 7, cpu: 1 }, data);
    const otherCpu = writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: 7, cpu: 2 }, 'on CPU 2');
    const sameCpu = writeLines({ ts: 14 * ms, pid: 100, fd: 1, file: 7, cpu: 1 }, 'on CPU 1');
    const frames = frame([h1!, c1!, ...otherCpu, ...sameCpu]);
    expect(frames.map((f) => f.kind === 'write' && [f.ts, f.whole, f.bytes.toString('latin1').replaceAll('\x05', '.').slice(0, 8)])).toEqual([
      [13_000, true, 'on CPU 2'],
      [12_000, false, '........'],
      [14_000, true, 'on CPU 1'],
    ]);
  });

  it('counts chunk lines no frame waits for, and drops them', () => {
    const framer = new RecordFramer();
    const [, chunk] = writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: 7 }, 'hello');
    expect(frame([chunk!, `P 4242 containerd`], { framer })).toEqual([]);
    expect(framer.strayChunks).toBe(2);
  });

  it('gives up frames that waited too long for lines that were lost, and says which is the oldest still open', () => {
    const framer = new RecordFramer();
    const out: Framed[] = [];
    const [header] = readLines({ ts: 12 * ms, pid: 100, file: 7 }, 'y'.repeat(300));
    const [later] = readLines({ ts: 11 * ms, pid: 101, file: 7 }, 'z'.repeat(300));
    framer.push(parse(header!), 1_000, out);
    framer.push(parse(later!), 1_500, out);
    expect(framer.oldestOpenTs()).toBe(11_000);
    framer.closeStale(2_000_999, 2_000_000, out);
    expect(out).toEqual([]);
    framer.closeStale(2_001_000, 2_000_000, out);
    expect(out.map((f) => [f.frame.kind, 'whole' in f.frame && f.frame.whole, f.arrivalUs])).toEqual([['read', false, 1_000]]);
    expect(framer.oldestOpenTs()).toBe(11_000);
    expect(framer.openCount).toBe(1);
  });

  it('makes the same frames from lines (chunk bytes decoded in place) as from their parsed records, on every recorded fixture', () => {
    for (const name of ['bridge.trace', 'shell.trace', 'bytes.trace', 'changes-bridge-full.trace', 'sigkill.trace']) {
      const fromLines: Framed[] = [];
      const fromRecords: Framed[] = [];
      const byLine = new RecordFramer();
      const byRecord = new RecordFramer();
      for (const line of traceLines(name)) {
        expect(byLine.pushLine(Buffer.from(line), 0, fromLines)).toBeNull();
        byRecord.push(parse(line), 0, fromRecords);
      }
      byLine.closeAll(fromLines);
      byRecord.closeAll(fromRecords);
      expect(fromLines.length, name).toBe(fromRecords.length);
      expect(fromLines.map((f) => f.frame), name).toEqual(fromRecords.map((f) => f.frame));
      expect(byLine.strayChunks).toBe(byRecord.strayChunks);
    }
  });

  it('refuses a chunk line with bad hex as malformed, leaving its frame as it was', () => {
    const framer = new RecordFramer();
    const out: Framed[] = [];
    const data = Buffer.alloc(400, 7);
    const [header, first, second] = writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: 7 }, data);
    expect(framer.pushLine(Buffer.from(header!), 0, out)).toBeNull();
    expect(framer.pushLine(Buffer.from(first!), 0, out)).toBeNull();
    // The same chunk again, its last byte's hex broken: it must not overwrite the bytes that came.
    const broken = `${first!.slice(0, -2)}zz`;
    expect(framer.pushLine(Buffer.from(broken), 0, out)).toMatchObject({ reason: 'bad-hex' });
    expect(framer.pushLine(Buffer.from(second!), 0, out)).toBeNull();
    expect(out).toHaveLength(1);
    expect(out[0]!.frame).toMatchObject({ kind: 'write', whole: true });
    expect(out[0]!.frame.kind === 'write' && out[0]!.frame.bytes.equals(data)).toBe(true);
  });
});
