// The first two stages of the record path: the framer puts a header and its
// chunk lines together into one frame, the sequencer puts bpftrace's per-CPU
// streams back in time order. Frames wait until the stream has moved the
// reorder window past them and no older frame is still being put together
// (or the caller releases on quiet), and leave oldest first, whole. The window
// follows the records' arrival lags (ReorderWindow).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordFramer, type Framed } from '../../collector/tracer/record-framer.js';
import { RecordSequencer, type Sequenced } from '../../collector/tracer/record-sequencer.js';
import { ReorderWindow, type ReorderWindowOptions } from '../../collector/tracer/reorder-window.js';
import type { TracerRecord } from '../../bpf/tracer-protocol.js';
import type { TracerFrame } from '../../bpf/index.js';

const ADAPTIVE: ReorderWindowOptions = { minUs: 30_000, maxUs: 2_000_000, factor: 1.5, horizonUs: 2_000_000 };
const FIXED = (us: number): ReorderWindowOptions => ({ minUs: us, maxUs: us, factor: 0, horizonUs: 1_000_000 });

/** A framer in front of a sequencer, wired as the record flow wires them (one tracer). */
class Stages {
  readonly framer = new RecordFramer();
  readonly seq: RecordSequencer;
  private readonly framed: Framed[] = [];
  private readonly out: Sequenced[] = [];

  constructor(private readonly window: ReorderWindowOptions) {
    this.seq = new RecordSequencer(new ReorderWindow(window));
  }

  /** One line's record, arrived at `nowUs`: the frames that may go on now. */
  push(rec: TracerRecord, nowUs: number): TracerFrame[] {
    this.framer.push(rec, nowUs, this.framed);
    this.sequence();
    return this.take();
  }

  releaseDue(nowUs: number): TracerFrame[] {
    this.framer.closeStale(nowUs, this.window.maxUs, this.framed);
    this.sequence();
    this.seq.releaseDue(nowUs, this.openTs(), this.out);
    return this.take();
  }

  releaseByClock(nowUs: number): TracerFrame[] {
    this.seq.releaseByClock(nowUs, this.openTs(), this.out);
    return this.take();
  }

  clockDueUs(nowUs: number): number | null {
    return this.seq.clockDueUs(nowUs, this.openTs());
  }

  /** No more lines: every frame goes on, those still open cut. */
  flush(): TracerFrame[] {
    this.framer.closeAll(this.framed);
    this.sequence();
    this.seq.releaseAll(0, Infinity, this.out);
    return this.take();
  }

  get heldCount(): number {
    return this.seq.heldCount + this.framer.openCount;
  }

  private openTs(): number {
    return this.framer.openCount > 0 ? this.framer.oldestOpenTs() : Infinity;
  }

  private sequence(): void {
    const open = this.openTs();
    for (const f of this.framed) this.seq.push(f.frame, 0, f.arrivalUs, open, this.out);
    this.framed.length = 0;
  }

  private take(): TracerFrame[] {
    const frames = this.out.map((s) => s.frame);
    this.out.length = 0;
    return frames;
  }
}

const fixed = (us: number) => new Stages(FIXED(us));
const adaptive = () => new Stages(ADAPTIVE);

/** An exec whose argv+env block is `blockBytes` long: ceil(blockBytes / 200) B lines follow it. */
const exec = (ts: number, pid: number, blockBytes = 0): TracerRecord => ({
  kind: 'exec',
  ts,
  pid,
  ppid: 1,
  start: String(ts),
  stdioFiles: ['1', '2', '3'],
  argBytes: Math.min(blockBytes, 10),
  blockBytes,
  path: '/opt/cni/bin/bridge',
});
const block = (pid: number, off = 0): TracerRecord => ({ kind: 'exec-chunk', pid, off, data: Buffer.alloc(200, pid % 256) });
const parent = (pid: number): TracerRecord => ({ kind: 'exec-parent', pid, comm: 'containerd' });
const write = (ts: number, tid: number, len: number): TracerRecord => ({ kind: 'write', ts, pid: tid, tid, fd: 1, file: '2', len });
const data = (tid: number, off: number): TracerRecord => ({ kind: 'data-chunk', tid, off, data: Buffer.alloc(200, 1) });
const fork = (ts: number, ppid: number, pid: number): TracerRecord => ({ kind: 'fork', ts, ppid, pid });
const exit = (ts: number, pid: number): TracerRecord => ({ kind: 'exit', ts, pid, start: '1', exitCode: 0, groupExitCode: 0, signalFlags: 0 });

const stamps = (frames: readonly TracerFrame[]) => frames.map((r) => ('ts' in r ? r.ts : r.kind));
const wholeness = (frames: readonly TracerFrame[]) => frames.map((f) => `${f.kind}${'whole' in f ? (f.whole ? ' whole' : ' cut') : ''}`);

// Kernel monotonic µs; records below arrive `lag` after their timestamp.
const T = 10_000_000;

describe('the framer and the sequencer, with a fixed window', () => {
  it('holds records until the stream has moved the window past them, then releases them oldest first', () => {
    const seq = fixed(2_000_000);
    expect(seq.push(exit(T + 1_000, 7), T + 1_000)).toEqual([]);
    expect(seq.push(exec(T + 500, 7), T + 1_000)).toEqual([]);
    expect(stamps(seq.push(fork(T + 2_001_000, 1, 8), T + 2_001_000))).toEqual([T + 500, T + 1_000]);
    expect(seq.heldCount).toBe(1);
  });

  it('releases everything in order on flush (the tracer went quiet)', () => {
    const seq = fixed(2_000_000);
    seq.push(exit(T + 30, 7), T + 30);
    seq.push(exec(T + 10, 7, 200), T + 30);
    seq.push(block(7), T + 30);
    seq.push(fork(T + 20, 7, 9), T + 30);
    expect(wholeness(seq.flush())).toEqual(['exec whole', 'fork', 'exit']);
  });

  it('passes a record that arrives behind what it released straight on', () => {
    const seq = fixed(30_000);
    seq.push(exec(T, 7), T);
    expect(stamps(seq.push(exec(T + 40_000, 8), T + 40_000))).toEqual([T]);
    expect(stamps(seq.push(exit(T - 5_000, 6), T + 40_000))).toEqual([T - 5_000]);
  });
});

describe('the framer and the sequencer, with a window that follows arrival lags', () => {
  it('releases a record some 30 ms into the stream while records arrive within a few ms', () => {
    const seq = adaptive();
    expect(seq.push(exec(T, 7), T + 1_000)).toEqual([]);
    expect(seq.push(fork(T + 20_000, 7, 8), T + 21_000)).toEqual([]);
    expect(stamps(seq.push(exit(T + 31_000, 7), T + 32_000))).toEqual([T]);
  });

  it('holds longer as soon as a record arrives far behind, so what that buffer still holds can follow', () => {
    const seq = adaptive();
    seq.push(exec(T, 7), T + 1_000);
    // CPU 1's buffer comes out 400 ms late: the window becomes 1.5 × 400 ms.
    expect(seq.push(fork(T + 40_000, 9, 10), T + 440_000)).toEqual([]);
    expect(seq.push(exit(T + 500_000, 7), T + 501_000)).toEqual([]);
    // CPU 0's late record, older than both (481 ms behind: the window is now 1.5 × that).
    expect(seq.push(fork(T + 20_000, 7, 11), T + 501_000)).toEqual([]);
    expect(seq.push(exit(T + 700_000, 9), T + 701_000)).toEqual([]);
    expect(stamps(seq.push(exit(T + 800_000, 12), T + 801_000))).toEqual([T, T + 20_000, T + 40_000]);
  });

  it('narrows again once the lags have stayed low for its horizon (the collector timer releases)', () => {
    const seq = adaptive();
    seq.push(exec(T, 7), T + 300_000);
    seq.push(exit(T + 100_000, 7), T + 301_000);
    expect(seq.releaseDue(T + 1_000_000)).toEqual([]);
    expect(stamps(seq.releaseDue(T + 2_400_000))).toEqual([T]);
  });

  it('releases by the clock once nothing older can still come, though the stream has not moved (a quiet node)', () => {
    const seq = adaptive();
    expect(seq.push(exec(T, 7), T + 1_000)).toEqual([]);
    expect(seq.push(exit(T + 5_000, 7), T + 6_000)).toEqual([]);
    expect(seq.clockDueUs(T + 6_000)).toBe(T + 30_000);
    expect(seq.releaseByClock(T + 29_000)).toEqual([]);
    expect(stamps(seq.releaseByClock(T + 30_000))).toEqual([T]);
    expect(stamps(seq.releaseByClock(T + 35_000))).toEqual([T + 5_000]);
    expect(seq.clockDueUs(T + 35_000)).toBeNull();
  });

  it('waits by the clock 1.5 × the largest recent lag, beyond the stream window cap under a flood', () => {
    const seq = adaptive();
    // Records arrive 3 s behind: the stream window is capped at 2 s, the clock waits 4.5 s.
    seq.push(exec(T, 7), T + 3_000_000);
    expect(seq.clockDueUs(T + 3_000_000)).toBe(T + 4_500_000);
    expect(seq.releaseByClock(T + 4_400_000)).toEqual([]);
    expect(stamps(seq.releaseByClock(T + 4_500_000))).toEqual([T]);
  });

  it('does not release by the clock what an exec still waiting for its chunk lines must come before', () => {
    const seq = adaptive();
    seq.push(exec(T, 7, 400), T + 1_000);
    seq.push(block(7, 0), T + 1_000);
    seq.push(fork(T + 5_000, 7, 8), T + 6_000);
    expect(seq.clockDueUs(T + 6_000)).toBeNull();
    expect(seq.releaseByClock(T + 100_000)).toEqual([]);
    expect(seq.push(block(7, 200), T + 101_000)).toEqual([]);
    expect(wholeness(seq.releaseByClock(T + 101_000))).toEqual(['exec whole', 'fork']);
  });

  it("gives a read's chunk lines to it, not to the thread's next write through another CPU's buffer that arrived amid them", () => {
    const seq = fixed(10_000);
    const onCpu = (rec: TracerRecord, cpu: number): TracerRecord => ({ ...rec, cpu }) as TracerRecord;
    const read: TracerRecord = { kind: 'read', ts: T, pid: 7, tid: 7, fd: 0, file: '1', len: 400, cpu: 0 };
    const out: TracerFrame[] = [];
    const chunk = (tid: number, off: number, cpu: number, fill: number): TracerRecord => ({ kind: 'data-chunk', tid, off, cpu, data: Buffer.alloc(200, fill) });
    for (const rec of [read, chunk(7, 0, 0, 1), onCpu(write(T + 100, 7, 200), 1), chunk(7, 0, 1, 3), chunk(7, 200, 0, 2)]) {
      out.push(...seq.push(rec, T + 1_000));
    }
    out.push(...seq.flush());
    expect(out.map((r) => `${r.kind}@${'cpu' in r ? r.cpu : '?'} ${'bytes' in r ? `${r.bytes.length}:${[...new Set(r.bytes)].join(',')}` : ''}`)).toEqual(['read@0 400:1,2', 'write@1 200:3']);
    expect(seq.framer.strayChunks).toBe(0);
  });

  it('keeps an exec until its argv/env chunks are in, even once the window has passed it', () => {
    const seq = adaptive();
    expect(seq.push(exec(T, 7, 450), T + 1_000)).toEqual([]);
    expect(seq.push(parent(7), T + 1_000)).toEqual([]);
    expect(seq.push(block(7, 0), T + 1_000)).toEqual([]);
    // The rest of its chunks is still in its CPU's buffer when the stream moves on.
    expect(seq.push(fork(T + 50_000, 9, 10), T + 51_000)).toEqual([]);
    expect(seq.push(block(7, 200), T + 51_000)).toEqual([]);
    const [frame, ...rest] = seq.push(block(7, 250), T + 51_000);
    expect(rest).toEqual([]);
    expect(frame).toMatchObject({ kind: 'exec', pid: 7, parentComm: 'containerd', whole: true });
    expect(frame?.kind === 'exec' && frame.block.length).toBe(450);
  });

  it('puts an exec’s path and working directory lines (printed before its B chunks) into its frame', () => {
    const seq = adaptive();
    const pathChunk: TracerRecord = { kind: 'exec-path-chunk', pid: 7, len: 300, off: 0, data: Buffer.alloc(200, 0x61) };
    const cwdName: TracerRecord = { kind: 'exec-cwd-name', pid: 7, depth: 0, name: Buffer.from('cni') };
    const cwdRoot: TracerRecord = { kind: 'exec-cwd-name', pid: 7, depth: 1, name: Buffer.alloc(0) };
    expect(seq.push(exec(T, 7, 200), T + 1_000)).toEqual([]);
    expect(seq.push(parent(7), T + 1_000)).toEqual([]);
    expect(seq.push(pathChunk, T + 1_000)).toEqual([]);
    expect(seq.push(cwdName, T + 1_000)).toEqual([]);
    expect(seq.push(cwdRoot, T + 1_000)).toEqual([]);
    expect(seq.push(fork(T + 50_000, 9, 10), T + 51_000)).toEqual([]);
    const frames = seq.push(block(7, 0), T + 51_000);
    // Its path's second N line never came: the path is the beginning the first one carried, cut.
    expect(frames).toMatchObject([{ kind: 'exec', parentComm: 'containerd', path: 'a'.repeat(200), pathCut: true, cwd: '/cni', whole: true }]);
    expect(seq.framer.strayChunks).toBe(0);
  });

  it('keeps a write until its payload chunks are in, and what came after it behind it', () => {
    const seq = adaptive();
    seq.push(write(T, 7, 300), T + 1_000);
    seq.push(data(7, 0), T + 1_000);
    seq.push(exit(T + 10_000, 8), T + 11_000);
    expect(seq.push(fork(T + 60_000, 9, 10), T + 61_000)).toEqual([]);
    expect(wholeness(seq.push(data(7, 100), T + 61_000))).toEqual(['write whole', 'exit']);
  });

  it('lets a frame whose chunks were lost go, cut, once it has waited the longest window for them', () => {
    const seq = adaptive();
    seq.push(exec(T, 7, 400), T + 1_000);
    seq.push(block(7, 0), T + 1_000);
    expect(seq.push(fork(T + 1_000_000, 9, 10), T + 1_001_000)).toEqual([]);
    expect(seq.releaseDue(T + 2_000_000)).toEqual([]);
    const frames = seq.releaseDue(T + 2_001_000);
    expect(stamps(frames)).toEqual([T]);
    expect(wholeness(frames)).toEqual(['exec cut']);
    expect(frames[0]?.kind === 'exec' && frames[0].block.length).toBe(200);
  });

  it('gives a frame up, cut, when the next header of its thread comes through the same CPU: its lines were lost', () => {
    const seq = adaptive();
    seq.push(write(T, 7, 400), T + 1_000);
    seq.push(data(7, 0), T + 1_000);
    seq.push(write(T + 100, 7, 0), T + 1_000);
    expect(wholeness(seq.flush())).toEqual(['write cut', 'write whole']);
  });

  it('counts a chunk whose frame has gone on as stray, and drops it', () => {
    const seq = adaptive();
    seq.push(write(T, 7, 200), T + 1_000);
    seq.push(data(7, 0), T + 1_000);
    seq.push(fork(T + 40_000, 9, 10), T + 41_000);
    expect(seq.push(data(7, 0), T + 41_000)).toEqual([]);
    expect(seq.framer.strayChunks).toBe(1);
  });

  it('releases a frame still waiting for chunk lines on flush, cut, with the bytes that came', () => {
    const seq = adaptive();
    seq.push(write(T, 7, 1_000), T + 1_000);
    seq.push(data(7, 0), T + 1_000);
    const frames = seq.flush();
    expect(wholeness(frames)).toEqual(['write cut']);
    expect(frames[0]).toMatchObject({ len: 1_000 });
    expect(frames[0] && 'bytes' in frames[0] && frames[0].bytes.length).toBe(200);
    expect(seq.heldCount).toBe(0);
  });

  it('counts no chunks for an empty payload or block: nothing holds it', () => {
    const seq = adaptive();
    seq.push(write(T, 7, 0), T + 1_000);
    expect(stamps(seq.push(fork(T + 40_000, 9, 10), T + 41_000))).toEqual([T]);
  });
});

/**
 * The model of bpftrace: each CPU prints its records in time order, each
 * header followed by its chunk lines; bpftrace drains the CPUs' buffers one
 * at a time, in any order, each at least every `minUs` (the window's floor),
 * and a drain may stop part-way through the chunks of a header still being
 * printed. Whatever the order, frames come out sorted, each whole.
 */
describe('the framer and the sequencer over interleaved per-CPU buffers', () => {
  const cpuStream = fc.array(fc.tuple(fc.integer({ min: 1, max: 8_000 }), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 30 });

  it('releases records in time order with their chunks, for any drain order, by the stream or also by the clock', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(cpuStream, { minLength: 1, maxLength: 4 }),
        // Mostly the first buffer: the others wait as long as the model lets them.
        fc.array(fc.constantFrom(0, 0, 0, 0, 1, 2, 3), { maxLength: 400 }),
        fc.array(fc.nat({ max: 3 }), { maxLength: 400 }),
        (byClock, cpus, picks, holdBacks) => {
          let pid = 100;
          const streams = cpus.map((steps, cpu) => {
            let ts = T;
            const lines: TracerRecord[] = [];
            for (const [gap, chunks] of steps) {
              ts += gap;
              const p = pid++;
              lines.push(exec(ts + cpu / 10, p, chunks * 200));
              for (let c = 0; c < chunks; c++) lines.push(block(p, c * 200));
            }
            return lines;
          });
          const seq = adaptive();
          const out: TracerFrame[] = [];
          const cursors = streams.map(() => 0);
          /** Up to when each buffer's printed records are all out (but for chunks still being printed). */
          const drainedAt = streams.map(() => T);
          const printable = (i: number, now: number) => {
            const r = streams[i]![cursors[i]!];
            return r !== undefined && (!('ts' in r) || r.ts === undefined || r.ts <= now);
          };
          for (let now = T, step = 0; cursors.some((c, i) => c < streams[i]!.length); now += 1_000, step++) {
            streams.forEach((_, i) => {
              if (!printable(i, now)) drainedAt[i] = now;
            });
            // The buffer bpftrace reads now: an overdue one, else the pick (nothing, if that one has nothing).
            const overdue = streams.findIndex((_, k) => printable(k, now) && now - drainedAt[k]! >= ADAPTIVE.minUs);
            const pick = overdue >= 0 ? overdue : (picks[step] ?? 0) % streams.length;
            if (!printable(pick, now)) continue;
            const taken: TracerRecord[] = [];
            while (printable(pick, now)) taken.push(streams[pick]![cursors[pick]!++]!);
            // The last header's probe may still be printing its chunks: some wait for the next drain.
            let back = Math.min(holdBacks[step] ?? 0, taken.length - 1 - taken.findLastIndex((r) => r.kind === 'exec'));
            while (back-- > 0) {
              taken.pop();
              cursors[pick]!--;
            }
            for (const rec of taken) out.push(...seq.push(rec, now));
            drainedAt[pick] = now;
            // The collector's clock timer, after the I/O phase: what was printed by now is in.
            if (byClock) out.push(...seq.releaseByClock(now));
          }
          out.push(...seq.flush());
          const execs = out.filter((r) => r.kind === 'exec');
          expect(execs).toHaveLength(streams.reduce((n, s) => n + s.filter((r) => r.kind === 'exec').length, 0));
          expect(execs.map((r) => r.ts)).toEqual([...execs.map((r) => r.ts)].sort((a, b) => a - b));
          for (const r of execs) {
            expect(r.whole).toBe(true);
            expect(r.block.equals(Buffer.alloc(r.blockBytes, r.pid % 256))).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
