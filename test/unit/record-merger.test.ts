// The record merger turns the frames of several tracers (the main one, the
// sched-only standby, the old main one after a mode switch) into one stream:
// each exec, fork and exit once, each process tree's payloads from one tracer.
// Which tracer a tree takes its payloads from is the process table's, which
// the assembler writes as the frames the merger passed reach it: each test
// runs the merger with an assembler behind it, as the record flow does.
import { describe, expect, it } from 'vitest';
import { CallAssembler } from '../../collector/assemble/assembler.js';
import { ProcessTable } from '../../collector/assemble/process-table.js';
import { RecordMerger } from '../../collector/tracer/record-merger.js';
import type { CaptureMode, TracerFrame } from '../../bpf/index.js';
import type { CollectorEvent } from '../../collector/types.js';

type TracerRecord = TracerFrame;

/** The merger, and behind it the assembler that keeps the process table it reads. */
class Merger {
  readonly procs: ProcessTable;
  readonly assembler: CallAssembler;
  readonly merger: RecordMerger;
  readonly events: CollectorEvent[] = [];

  constructor(initial: { src: number | null; mode: CaptureMode }) {
    this.procs = new ProcessTable(initial);
    this.assembler = new CallAssembler({ monoToEpochUs: (us) => us }, (e) => this.events.push(e), this.procs);
    this.merger = new RecordMerger(this.procs);
  }

  get counters() {
    return this.merger.counters;
  }

  setPayloadSource(src: number | null, mode: CaptureMode, fromTs: number): void {
    this.procs.setPayloadSource(src, mode, fromTs);
  }

  pass(frame: TracerRecord, src: number, out: TracerRecord[], cut: number[]): void {
    const passed: TracerRecord[] = [];
    this.merger.pass(frame, src, passed, cut);
    this.assemble(passed, out);
  }

  sourceGone(src: number, out: TracerRecord[] = []): { cut: number[]; inFlight: number[] } {
    const passed: TracerRecord[] = [];
    const gone = this.merger.sourceGone(src, passed);
    this.assemble(passed, out);
    return gone;
  }

  sourceLost(src: number, window: { fromTs: number }, out: TracerRecord[], cut: number[]): void {
    const passed: TracerRecord[] = [];
    this.merger.sourceLost(src, window, passed, cut);
    this.assemble(passed, out);
  }

  expire(nowUs: number, out: TracerRecord[], cut: number[]): void {
    const passed: TracerRecord[] = [];
    this.merger.expire(nowUs, passed, cut);
    this.assemble(passed, out);
  }

  private assemble(passed: readonly TracerRecord[], out: TracerRecord[]): void {
    for (const f of passed) {
      this.assembler.push(f, 0);
      out.push(f);
    }
  }
}

const T = 10_000_000;
const exec = (ts: number, pid: number, ppid = 1, path = '/opt/cni/bin/bridge'): TracerRecord => ({
  kind: 'exec',
  ts,
  pid,
  ppid,
  start: String(pid * 1000),
  stdioFiles: ['1', '2', '3'],
  argBytes: 10,
  blockBytes: 200,
  path,
  pathCut: false,
  cwd: null,
  parentComm: null,
  block: Buffer.alloc(200),
  whole: true,
});
const fork = (ts: number, ppid: number, pid: number): TracerRecord => ({ kind: 'fork', ts, ppid, pid });
const exit = (ts: number, pid: number): TracerRecord => ({ kind: 'exit', ts, pid, start: String(pid * 1000), exitCode: 0, groupExitCode: 0, signalFlags: 0 });
const write = (ts: number, pid: number): TracerRecord => ({ kind: 'write', ts, pid, tid: pid, fd: 1, file: '2', len: 5, bytes: Buffer.from('hello'), whole: true });

/** Feeds frames, each with its source, in order; appends what went on to `out` and the pids whose bytes may be cut to `cut`. */
function merge(merger: Merger, frames: readonly TracerRecord[], sources: readonly number[], out: TracerRecord[], cut: number[] = []): void {
  frames.forEach((f, i) => merger.pass(f, sources[i]!, out, cut));
}

/** Feeds [source, frame] pairs in order; returns what went on. */
function run(merger: Merger, input: Array<[number, TracerRecord]>): TracerRecord[] {
  const out: TracerRecord[] = [];
  merge(
    merger,
    input.map(([, r]) => r),
    input.map(([s]) => s),
    out,
  );
  return out;
}

const MAIN = 1;
const STANDBY = 2;
const NEW = 3;

describe('RecordMerger', () => {
  it('passes an exec, fork and exit seen by the main tracer and the standby once, the exec with the copy kept', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out = run(m, [
      [MAIN, exec(T, 10)],
      [STANDBY, { ...exec(T + 3, 10), block: Buffer.alloc(200, 1) } as TracerRecord],
      [STANDBY, fork(T + 100, 10, 11)],
      [MAIN, fork(T + 101, 10, 11)],
      [MAIN, exit(T + 500, 10)],
      [STANDBY, exit(T + 502, 10)],
    ]);
    expect(out.map((r) => r.kind)).toEqual(['exec', 'fork', 'exit']);
    expect(out[0]!.kind === 'exec' && out[0]!.block.equals(Buffer.alloc(200))).toBe(true);
    expect(m.counters.duplicates).toBe(3);
  });

  it('passes one copy when three tracers saw the event (a mode switch beside the standby)', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out = run(m, [
      [MAIN, exec(T, 10)],
      [NEW, exec(T + 2, 10)],
      [STANDBY, exec(T + 4, 10)],
    ]);
    expect(out).toHaveLength(1);
  });

  it('keeps two real execs of one process (exec in place) apart when they are further apart than the same event can be', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out = run(m, [
      [MAIN, exec(T, 10, 1, '/opt/cni/bin/wrapper')],
      [MAIN, exec(T + 5_000, 10, 1, '/opt/cni/bin/wrapper')],
    ]);
    expect(out).toHaveLength(2);
  });

  it('takes a tree\'s payloads from the payload tracer of when it started, across a switch', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    m.setPayloadSource(NEW, 'full', T + 1_000);
    const out = run(m, [
      [MAIN, exec(T, 10)], // started before the switch: MAIN's bytes
      [MAIN, fork(T + 10, 10, 12)],
      [NEW, exec(T + 2_000, 20)], // after: NEW's bytes
      [MAIN, exec(T + 2_001, 20)],
      [MAIN, write(T + 3_000, 10)],
      [NEW, write(T + 3_001, 10)],
      [NEW, write(T + 3_100, 12)], // the old tree's child: MAIN's
      [MAIN, write(T + 3_101, 12)],
      [MAIN, write(T + 3_200, 20)],
      [NEW, write(T + 3_201, 20)],
    ]);
    const writes = out.filter((r) => r.kind === 'write');
    expect(writes.map((w) => ('ts' in w ? w.ts : 0))).toEqual([T + 3_000, T + 3_101, T + 3_201]);
    expect(m.counters.payloadsFromOther).toBe(3);
  });

  it('records new calls in the capture mode of the payload source where they start, and drops the tracers\' own hellos', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    m.setPayloadSource(null, 'light', T + 1_000);
    const out = run(m, [[STANDBY, { kind: 'hello', version: 1, mode: 'light', ts: T - 5 }], [MAIN, exec(T, 10)], [MAIN, exec(T + 2_000, 20)]]);
    expect(out.map((r) => r.kind)).toEqual(['exec', 'exec']);
    expect(m.events.filter((e) => e.type === 'call.started').map((e) => [e.call.pid, e.call.captureMode])).toEqual([
      [10, 'full'],
      [20, 'light'],
    ]);
  });

  it('reports the exits of processes whose payload tracer died, so their calls are marked', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out: TracerRecord[] = [];
    const cut: number[] = [];
    merge(m, [exec(T, 10), exec(T + 10, 20), exec(T + 20, 40)], [MAIN, MAIN, MAIN], out, cut);
    // 20 and 40 exited just before the main tracer died (its bytes may be unread); 50 long before.
    merge(m, [exec(T + 30, 50), exit(T + 40, 50), exit(T + 1_100_000, 20), exit(T + 1_100_060, 40), exit(T + 1_100_061, 40)], [MAIN, MAIN, STANDBY, STANDBY, MAIN], out, cut);
    const gone = m.sourceGone(MAIN);
    expect(gone.cut).toEqual([10, 20, 40]);
    // 10 still ran, 20's exit (the standby's) waited for the main tracer's copy: even a tracer stopped on purpose cut those.
    expect(gone.inFlight).toEqual([10, 20]);
    m.setPayloadSource(null, 'light', T + 1_100_100);
    merge(m, [exit(T + 1_100_200, 10), exec(T + 1_100_300, 30), exit(T + 1_100_400, 30)], [STANDBY, STANDBY, STANDBY], out, cut);
    expect(cut).toEqual([10]);
  });

  it('holds an exit the standby reported first until the payload tracer\'s own copy, or its death, says whether its bytes are in', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out: TracerRecord[] = [];
    merge(m, [exec(T, 10), exec(T + 5, 20), exit(T + 100, 10)], [MAIN, MAIN, STANDBY], out);
    expect(out.map((r) => r.kind)).toEqual(['exec', 'exec']);
    merge(m, [exit(T + 101, 10), exit(T + 200, 20)], [MAIN, STANDBY], out);
    expect(out.filter((r) => r.kind === 'exit').map((r) => ('pid' in r ? r.pid : 0))).toEqual([10]);
    const released: TracerRecord[] = [];
    const gone = m.sourceGone(MAIN, released);
    expect(gone.cut).toEqual([10, 20]);
    // 20's exit waited for the main tracer's copy (its count of payload records): in flight.
    expect(gone.inFlight).toEqual([20]);
    expect(released.map((r) => ('pid' in r ? r.pid : 0))).toEqual([20]);
  });

  it("passes an exit's count of payload records only from the tracer that supplies the process's payloads", () => {
    const counted = (ts: number, pid: number, ioRecords: number): TracerRecord => ({ ...exit(ts, pid), ioRecords } as TracerRecord);
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out = run(m, [
      [MAIN, exec(T, 10)],
      [MAIN, exec(T + 10, 20)],
      // The standby (no payload probes, its count 0) reports 10's exit first: held, then the main tracer's copy goes on.
      [STANDBY, counted(T + 500, 10, 0)],
      [MAIN, counted(T + 502, 10, 3)],
      // 20's exit from its own payload tracer keeps its count.
      [MAIN, counted(T + 600, 20, 1)],
    ]);
    const exits = out.filter((r) => r.kind === 'exit');
    expect(exits).toHaveLength(2);
    expect(exits[0]).toMatchObject({ pid: 10, ioRecords: 3 });
    expect(exits[1]).toMatchObject({ pid: 20, ioRecords: 1 });
    const light = new Merger({ src: null, mode: 'light' });
    const [only] = run(light, [
      [MAIN, exec(T, 30)],
      [MAIN, counted(T + 500, 30, 2)],
    ]).filter((r) => r.kind === 'exit');
    expect(only).not.toHaveProperty('ioRecords');
  });

  it("holds a thread's end the standby reported first until the payload tracer's copy with the thread's count", () => {
    const ended = (ts: number, tid: number, pid: number, ioRecords: number): TracerRecord => ({ kind: 'thread-exit', ts, tid, pid, ioRecords });
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out: TracerRecord[] = [];
    merge(m, [exec(T, 10), fork(T + 10, 10, 11), fork(T + 11, 10, 12), ended(T + 500, 11, 10, 0)], [MAIN, MAIN, MAIN, STANDBY], out);
    // The standby's copy (no payload probes: count 0) would let the call out before the worker's records came.
    expect(out.filter((r) => r.kind === 'thread-exit')).toEqual([]);
    merge(m, [ended(T + 502, 11, 10, 2), ended(T + 600, 12, 10, 1), ended(T + 601, 12, 10, 0)], [MAIN, MAIN, STANDBY], out);
    expect(out.filter((r) => r.kind === 'thread-exit')).toEqual([ended(T + 502, 11, 10, 2), ended(T + 600, 12, 10, 1)]);
    // One whose payload tracer's copy does not come: held however far that tracer printed past it (its copy may be in
    // a CPU buffer read later), until that tracer reports a loss that may hold it: then it goes on without a count,
    // its process cut.
    merge(m, [ended(T + 700, 13, 10, 0)], [STANDBY], out);
    const expired: TracerRecord[] = [];
    const cut: number[] = [];
    merge(m, [write(T + 6_000_000, 10)], [MAIN], out);
    m.expire(T + 6_000_000, expired, cut);
    expect([expired, cut]).toEqual([[], []]);
    m.sourceLost(STANDBY, { fromTs: T }, expired, cut);
    m.sourceLost(MAIN, { fromTs: T + 701 }, expired, cut);
    expect([expired, cut]).toEqual([[], []]);
    m.sourceLost(MAIN, { fromTs: T + 500 }, expired, cut);
    expect(expired).toEqual([{ kind: 'thread-exit', ts: T + 700, tid: 13, pid: 10 }]);
    expect(cut).toEqual([10]);
    // Or once it has waited 30 s of the clock (from the newest record when it was held), should that tracer print nothing at all.
    merge(m, [ended(T + 800, 17, 10, 0)], [STANDBY], out);
    const late: TracerRecord[] = [];
    m.expire(T + 26_000_000, late, cut);
    expect(late).toEqual([]);
    m.expire(T + 36_001_000, late, cut);
    expect(late).toEqual([{ kind: 'thread-exit', ts: T + 800, tid: 17, pid: 10 }]);
    // The payload tracer's copy dated 5 ms after the standby's (its program preempted between the two runs): not
    // matched as one sighting, yet it releases the held copy, which does not expire as cut.
    merge(m, [ended(T + 800, 15, 10, 0), ended(T + 5_800, 15, 10, 4)], [STANDBY, MAIN], out);
    expect(out.filter((r) => r.kind === 'thread-exit').at(-1)).toEqual(ended(T + 5_800, 15, 10, 4));
    // The same the other way round: the payload tracer's copy first, the standby's 5 ms later is a duplicate, not held.
    merge(m, [ended(T + 900, 16, 10, 3), ended(T + 5_900, 16, 10, 0)], [MAIN, STANDBY], out);
    expect(out.filter((r) => r.kind === 'thread-exit').at(-1)).toEqual(ended(T + 900, 16, 10, 3));
    const later: TracerRecord[] = [];
    const laterCut: number[] = [];
    merge(m, [write(T + 12_000_000, 10)], [MAIN], out);
    m.expire(T + 12_000_000, later, laterCut);
    expect([later, laterCut]).toEqual([[], []]);
    // An older tracer's end (no time, no count) passes as it is, every copy.
    expect(run(m, [[STANDBY, { kind: 'thread-exit', tid: 14 }], [MAIN, { kind: 'thread-exit', tid: 14 }]])).toHaveLength(2);
  });

  it("holds an exit that came ahead of its exec, and reports it cut when the payload tracer dies before its copy", () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    const out: TracerRecord[] = [];
    // The standby's exit of 30 comes through another CPU's buffer before its exec; the main tracer is killed.
    merge(m, [exit(T + 100, 30)], [STANDBY], out);
    expect(out.filter((r) => r.kind === 'exit')).toEqual([]);
    const released: TracerRecord[] = [];
    expect(m.sourceGone(MAIN, released).cut).toContain(30);
    expect(released.map((r) => r.kind)).toEqual(['exit']);
  });

  it('gives a tree whose payload tracer died no more bytes from another', () => {
    const m = new Merger({ src: MAIN, mode: 'full' });
    run(m, [[MAIN, exec(T, 10)]]);
    m.sourceGone(MAIN);
    m.setPayloadSource(NEW, 'full', T + 5_000);
    const out = run(m, [[NEW, write(T + 6_000, 10)]]);
    expect(out).toEqual([]);
  });
});
