// The record sequencer puts bpftrace's per-CPU streams back in time order:
// records wait until every CPU's heartbeat has passed them (or the stream has
// moved the reorder window past them, or the caller flushes on quiet), and
// leave oldest first with the chunk lines that belong to them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordSequencer } from '../../collector/record-sequencer.js';
import type { TracerRecord } from '../../collector/tracer-protocol.js';

const WINDOW_US = 2_000_000;

const exec = (ts: number, pid: number): TracerRecord => ({
  kind: 'exec',
  ts,
  pid,
  ppid: 1,
  start: String(ts),
  stdioInodes: ['1', '2', '3'],
  argBytes: 10,
  blockBytes: 10,
  path: '/opt/cni/bin/bridge',
});
const chunk = (pid: number): TracerRecord => ({ kind: 'exec-chunk', pid, off: 0, data: Buffer.from('x') });
const fork = (ts: number, ppid: number, pid: number): TracerRecord => ({ kind: 'fork', ts, ppid, pid });
const exit = (ts: number, pid: number): TracerRecord => ({ kind: 'exit', ts, pid, start: '1', exitCode: 0, groupExitCode: 0, signalFlags: 0 });
const beat = (ts: number, cpu: number): TracerRecord => ({ kind: 'heartbeat', ts, cpu });

const stamps = (records: readonly TracerRecord[]) => records.map((r) => ('ts' in r ? r.ts : r.kind));

describe('RecordSequencer without heartbeats', () => {
  it('holds records until the stream has moved the reorder window past them, then releases them oldest first', () => {
    const seq = new RecordSequencer(WINDOW_US);
    expect(seq.push(exit(1_000, 7))).toEqual([]);
    expect(seq.push(exec(500, 7))).toEqual([]);
    expect(stamps(seq.push(fork(2_001_000, 1, 8)))).toEqual([500, 1_000]);
    expect(seq.heldCount).toBe(1);
  });

  it('releases everything in order on flush (the tracer went quiet)', () => {
    const seq = new RecordSequencer(WINDOW_US);
    seq.push(exit(30, 7));
    seq.push(exec(10, 7));
    seq.push(chunk(7));
    seq.push(fork(20, 7, 9));
    expect(seq.flush().map((r) => r.kind)).toEqual(['exec', 'exec-chunk', 'fork', 'exit']);
  });
});

describe('RecordSequencer with per-CPU heartbeats', () => {
  it('releases a record once every CPU has sent a heartbeat past it, long before the reorder window', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0 });
    expect(seq.push(exec(1_000, 7))).toEqual([]);
    expect(seq.push(chunk(7))).toEqual([]);
    // CPU 0 has passed it, CPU 1 has not said anything yet: an older record may still be in its buffer.
    expect(seq.push(beat(20_000, 0))).toEqual([]);
    expect(seq.push(beat(20_000, 1)).map((r) => r.kind)).toEqual(['exec', 'exec-chunk']);
  });

  it('keeps a record that one CPU has not passed yet, and lets that CPU\'s older records go first', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0 });
    seq.push(beat(1_000, 0));
    seq.push(beat(1_000, 1));
    // CPU 0's buffer is read first: its exit, then its heartbeat.
    expect(seq.push(exit(5_000, 7))).toEqual([]);
    expect(seq.push(beat(9_000, 0))).toEqual([]);
    // CPU 1 follows with the exec that came before that exit.
    expect(seq.push(exec(3_000, 7))).toEqual([]);
    expect(stamps(seq.push(beat(9_000, 1)))).toEqual([3_000, 5_000]);
  });

  it('waits a margin behind the slowest heartbeat, for a probe the heartbeat interrupted', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 1, heartbeatMarginUs: 1_000 });
    seq.push(exec(10_000, 7));
    expect(seq.push(beat(10_500, 0))).toEqual([]);
    expect(stamps(seq.push(beat(11_000, 0)))).toEqual([10_000]);
  });

  it('does not use heartbeats until every CPU has sent one', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0 });
    seq.push(exec(1_000, 7));
    expect(seq.push(beat(50_000, 0))).toEqual([]);
    expect(seq.push(beat(60_000, 0))).toEqual([]);
    expect(seq.heldCount).toBe(1);
  });

  it('stops waiting for a CPU whose heartbeats stopped while the others are current', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0, heartbeatSilenceUs: 100_000 });
    seq.push(beat(1_000, 0));
    seq.push(beat(1_000, 1));
    seq.push(exec(5_000, 7));
    // CPU 1 went offline; CPU 0 keeps beating and the clock says its beats are current.
    expect(seq.push(beat(50_000, 0), 60_000)).toEqual([]);
    expect(stamps(seq.push(beat(150_000, 0), 160_000))).toEqual([5_000]);
  });

  it('keeps waiting for a silent CPU while every heartbeat is stale (bpftrace is draining a backlog)', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0, heartbeatSilenceUs: 100_000 });
    seq.push(beat(1_000, 0));
    seq.push(beat(1_000, 1));
    seq.push(exec(5_000, 7));
    // Half a second behind: CPU 0's old output is coming out, CPU 1's has not yet.
    expect(seq.push(beat(150_000, 0), 650_000)).toEqual([]);
    expect(seq.releaseDue(700_000)).toEqual([]);
    // CPU 1's buffer follows, with an older record.
    expect(seq.push(exec(4_000, 8))).toEqual([]);
    expect(stamps(seq.push(beat(150_000, 1), 700_000))).toEqual([4_000, 5_000]);
  });

  it('releases on a timer once a silent CPU stops counting', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 2, heartbeatMarginUs: 0, heartbeatSilenceUs: 100_000 });
    seq.push(beat(10_000, 0));
    seq.push(beat(1_000, 1));
    seq.push(exec(5_000, 7));
    expect(seq.releaseDue(20_000)).toEqual([]);
    // CPU 1's heartbeat is 100 ms old, CPU 0's is not: the record goes.
    expect(stamps(seq.releaseDue(105_000))).toEqual([5_000]);
  });

  it('passes a record that arrives behind the heartbeats straight on', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 1, heartbeatMarginUs: 0 });
    seq.push(beat(10_000, 0));
    expect(stamps(seq.push(exit(9_000, 7)))).toEqual([9_000]);
  });

  it('never hands heartbeats on', () => {
    const seq = new RecordSequencer(WINDOW_US, { cpus: 1, heartbeatMarginUs: 0 });
    const out = [...seq.push(exec(1, 7)), ...seq.push(beat(10, 0)), ...seq.flush()];
    expect(out.map((r) => r.kind)).toEqual(['exec']);
  });

  // The model: each CPU's output is in time order with its heartbeats; bpftrace reads the CPUs'
  // buffers in any interleaving that keeps each CPU's order. Whatever the interleaving, the records
  // come out sorted, each with its chunk right behind it.
  it('releases records in time order for any interleaving of in-order per-CPU streams', () => {
    const cpuStream = fc.array(fc.tuple(fc.integer({ min: 1, max: 5_000 }), fc.boolean()), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(fc.array(cpuStream, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 200 }), (cpus, picks) => {
        let pid = 100;
        const streams = cpus.map((steps, cpu) => {
          let ts = 0;
          const lines: TracerRecord[] = [];
          for (const [gap, isBeat] of steps) {
            ts += gap;
            if (isBeat) lines.push(beat(ts, cpu));
            else {
              const p = pid++;
              lines.push(exec(ts + cpu / 10, p), chunk(p));
            }
          }
          return lines;
        });
        // Interleave whole records (an exec and its chunk come out of one buffer together).
        const cursors = streams.map(() => 0);
        const seq = new RecordSequencer(WINDOW_US, { cpus: streams.length, heartbeatMarginUs: 0 });
        const out: TracerRecord[] = [];
        let pick = 0;
        for (;;) {
          const open = streams.map((s, i) => i).filter((i) => cursors[i]! < streams[i]!.length);
          if (open.length === 0) break;
          const i = open[(picks[pick++] ?? 0) % open.length]!;
          const s = streams[i]!;
          const first = s[cursors[i]!]!;
          out.push(...seq.push(first));
          cursors[i]!++;
          if (first.kind === 'exec') out.push(...seq.push(s[cursors[i]!++]!));
        }
        out.push(...seq.flush());
        const execs = out.filter((r) => r.kind === 'exec');
        expect(execs.map((r) => r.ts)).toEqual([...execs.map((r) => r.ts)].sort((a, b) => a - b));
        out.forEach((r, i) => {
          if (r.kind === 'exec') expect(out[i + 1]).toMatchObject({ kind: 'exec-chunk', pid: r.pid });
        });
      }),
      { numRuns: 300 },
    );
  });
});
