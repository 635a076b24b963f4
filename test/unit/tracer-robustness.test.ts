/**
 * Regression tests for what the tracer fuzz tests (fuzz-tracer.test.ts) found:
 * records parked for good, a call published twice, and the two parse paths
 * disagreeing about the same line.
 */

import { describe, expect, it } from 'vitest';
import { parseTracerBytes, parseTracerLine } from '../../bpf/tracer-protocol.js';
import { FAR_FUTURE_MS, replay } from '../support/replay.js';
import { execLines, exitLine, forkLine, readLines } from '../support/tracer-lines.js';

const ms = 1_000_000; // one millisecond in ns
const CNI_ENV = { CNI_COMMAND: 'ADD', CNI_PATH: '/opt/cni/bin', CNI_ARGS: 'K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p' };
const STDIO = [501, 502, 503] as const;
const plugin = (pid: number, start: number, ts: number) =>
  execLines({ ts, pid, ppid: 1, start, path: '/opt/cni/bin/bridge', env: CNI_ENV, stdio: STDIO });
/** Past the 2 s the framer waits for missing chunk lines, and the 10 s records wait for their process. */
const AFTER_TTL_MS = 11_000;

describe('records whose chunks never come are not held for good', () => {
  it('a read that lost its chunks is filed (truncated) after a while, not kept', () => {
    const [header, firstChunk] = readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, 'x'.repeat(500));
    const r = replay([...plugin(100, 10 * ms, 11 * ms), header!, firstChunk!], { end: 'none' });
    expect(r.heldState().openFrames).toBe(1);
    r.tick(r.nowMs + AFTER_TTL_MS);
    expect(r.heldState().openFrames).toBe(0);
    r.feed([exitLine({ ts: 20 * ms, pid: 100, start: 10 * ms })]);
    r.tick(FAR_FUTURE_MS);
    expect(r.finished[0]!.stdin).toMatchObject({ totalBytes: 500, truncated: true });
    expect(r.finished[0]!.stdin.bytes.toString()).toBe('x'.repeat(200));
  });

  it('a read of a process never seen is dropped and counted once its time is up', () => {
    const [header] = readLines({ ts: 12 * ms, pid: 4242, file: 7 }, 'y'.repeat(300));
    const r = replay([header!], { end: 'none' });
    // Given up on (cut) once its lines are past due, then kept for its process's exec as long as records are.
    r.tick(r.nowMs + AFTER_TTL_MS);
    expect(r.heldState()).toMatchObject({ openFrames: 0, earlyRecords: 1 });
    r.tick(r.nowMs + 2 * AFTER_TTL_MS);
    expect(r.heldState()).toMatchObject({ openFrames: 0, earlyRecords: 0 });
    expect(r.assembler.counters.unattributed).toBe(1);
  });

  it('a zero-length read is filed at once: no chunk will ever complete it', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), `R ${12 * ms} 100 100 0 ${STDIO[0]} 0`], { end: 'none' });
    expect(r.heldState().openFrames).toBe(0);
  });

  it('an exec that lost its argv/env chunks is published after a while with what it has', () => {
    const [header] = plugin(100, 10 * ms, 11 * ms);
    const r = replay([header!], { end: 'none' });
    expect(r.started).toHaveLength(0);
    r.tick(r.nowMs + AFTER_TTL_MS);
    expect(r.heldState().openFrames).toBe(0);
    expect(r.started).toHaveLength(1);
    expect(r.started[0]!.path).toBe('/opt/cni/bin/bridge');
  });

  it('a helper still running when its call was published, whose exit never comes, is forgotten after a minute', () => {
    const r = replay(
      [
        ...plugin(100, 10 * ms, 11 * ms),
        forkLine(12 * ms, 100, 150),
        ...execLines({ ts: 13 * ms, pid: 150, ppid: 100, start: 12 * ms, path: '/usr/sbin/iptables', env: CNI_ENV }),
        exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
      ],
      { end: 'none' },
    );
    r.tick(r.nowMs + 5_500); // past the grace and the wait for descendants not seen to end
    expect(r.finished).toHaveLength(1);
    expect(r.assembler.livePids().includes(150)).toBe(true);
    r.tick(r.nowMs + 30_000);
    expect(r.assembler.livePids().includes(150)).toBe(true);
    r.tick(r.nowMs + 66_000);
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });

  it('a forked child that exits after its call was published is forgotten', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), forkLine(12 * ms, 100, 150), exitLine({ ts: 13 * ms, pid: 100, start: 10 * ms })], { end: 'none' });
    r.tick(r.nowMs + 5_500);
    expect(r.finished).toHaveLength(1);
    r.feed([exitLine({ ts: 20 * ms, pid: 150, start: 12 * ms })]);
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });
});

describe('an exec record seen twice is one call', () => {
  it('while the call runs', () => {
    const lines = plugin(100, 10 * ms, 11 * ms);
    const r = replay([...lines, ...lines, exitLine({ ts: 20 * ms, pid: 100, start: 10 * ms })]);
    expect(r.started).toHaveLength(1);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]!.parentId).toBeNull();
    expect(r.assembler.counters.duplicateExecs).toBe(1);
  });

  it('after the call was published', () => {
    const lines = plugin(100, 10 * ms, 11 * ms);
    const r = replay([...lines, exitLine({ ts: 20 * ms, pid: 100, start: 10 * ms })], { end: 'none' });
    r.tick(r.nowMs + 1_000);
    r.feed(lines);
    r.flushAll('stop');
    expect(r.started).toHaveLength(1);
    expect(r.finished).toHaveLength(1);
  });
});

describe('the byte path and the string path of the parser agree', () => {
  const both = (line: string) => [parseTracerBytes(Buffer.from(line)).ok, parseTracerLine(line).ok];

  it.each([
    ['an empty data chunk', 'D 100 0 '],
    ['an empty exec chunk', 'B 100 -5 '],
  ])('%s is refused by both (a chunk always holds bytes)', (_name, line) => {
    expect(both(line)).toEqual([false, false]);
  });

  it.each([
    ['16 digits, a safe integer', 'D 1000000000000000 0 \\x41', true],
    ['17 digits with leading zeros', 'D 00000000000000001 0 \\x41', true],
    ['past 2^53', 'D 9007199254740993 0 \\x41', false],
    ['21 digits', 'B 1 -000000000000000000001 \\x41', false],
  ])('a chunk id or offset of %s: both say the same', (_name, line, ok) => {
    expect(both(line)).toEqual([ok, ok]);
  });

  it('a lost-records count past 2^53 is refused rather than summed inexactly', () => {
    expect(parseTracerLine('Lost 99999999999999999999 events').ok).toBe(false);
    expect(parseTracerLine('Lost 12 events')).toEqual({ ok: true, record: { kind: 'lost', count: 12 } });
  });
});
