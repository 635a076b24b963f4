/**
 * A Go plugin's worker thread writes its result, and the process's exit
 * overtakes that write (bpftrace drains one CPU's buffer at a time; the
 * thread's end came through another). The tracer counts payload records per
 * thread: the exit carries the leader's, the thread's end its own, so the
 * call waits for the write and is published once, exact. The old tracer's
 * count per process could miss a bump when two threads printed at once (its
 * `++` is not atomic): the call went out short, and a call.updated mended it.
 *
 * Threads are counted the same way: the tracer marks a thread's clone on its
 * F line (no process of its own), and each end says how many tasks its
 * thread cloned, so a thread whose clone, records and end all come after the
 * exit is still waited for.
 */

import { describe, expect, it } from 'vitest';
import { replay } from '../support/replay.js';
import { execLines, exitLine, forkLine, readLines, threadExitLine, writeLines } from '../support/tracer-lines.js';

const ms = 1_000_000; // one millisecond in ns
const CNI_ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'ctr-1', CNI_PATH: '/opt/cni/bin', CNI_ARGS: 'K8S_POD_NAMESPACE=ns;K8S_POD_NAME=web-0' };
const STDIO = [501, 502, 503] as const;
const CONFIG = '{"cniVersion":"1.0.0","name":"net"}';
const RESULT = '{"cniVersion":"1.0.0","ips":[{"address":"10.0.0.5/24"}]}';

/** Leader 100 reads the config on CPU 0; worker 101 writes the result on CPU 1, then ends on CPU 0. */
const head = [
  ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', env: CNI_ENV, stdio: STDIO }),
  forkLine(11 * ms, 100, 101),
  ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0], cpu: 0 }, CONFIG),
];
const workerWrite = writeLines({ ts: 13 * ms, pid: 100, tid: 101, fd: 1, file: STDIO[1], cpu: 1 }, RESULT);

/** CPU 0's buffer read first: the thread's end and the exit, then, half a second on, CPU 1's write. */
function exitOvertakesWrite(threadEnd: string, exit: string) {
  const r = replay([...head, threadEnd, exit], { end: 'none' });
  r.tick(r.nowMs + 500);
  const beforeWrite = r.finished.length;
  r.feed(workerWrite);
  r.tick(r.nowMs + 60_000);
  return { r, beforeWrite };
}

describe('a thread’s payload records, counted on its end', () => {
  it('hold the call until the thread’s write overtaken by the exit comes: published once, exact, never updated', () => {
    const { r, beforeWrite } = exitOvertakesWrite(
      threadExitLine(101, { ts: 14 * ms, pid: 100, ioRecords: 1 }),
      exitLine({ ts: 15 * ms, pid: 100, start: 9 * ms, ioRecords: 1 }),
    );
    expect(beforeWrite).toBe(0);
    expect(r.finished).toHaveLength(1);
    expect(r.updated).toHaveLength(0);
    const call = r.finished[0]!;
    expect(call).toMatchObject({ status: 'finished', lostRecords: false });
    expect(call.stdin.bytes.toString()).toBe(CONFIG);
    expect(call.stdout.bytes.toString()).toBe(RESULT);
  });

  it('hold it as well when the thread’s end comes after the exit', () => {
    const r = replay([...head, exitLine({ ts: 15 * ms, pid: 100, start: 9 * ms, ioRecords: 1 }), threadExitLine(101, { ts: 15 * ms + 10, pid: 100, ioRecords: 1 })], { end: 'none' });
    r.tick(r.nowMs + 500);
    expect(r.finished).toHaveLength(0);
    r.feed(workerWrite);
    r.tick(r.nowMs + 60_000);
    expect(r.finished).toHaveLength(1);
    expect(r.updated).toHaveLength(0);
    expect(r.finished[0]!.stdout.bytes.toString()).toBe(RESULT);
  });

  it('were not counted by the old tracer, whose racy count per process let the call out short, mended by a call.updated', () => {
    // Two records printed, counted once (the leader's read and the worker's write bumped @io[pid] at once).
    const { r, beforeWrite } = exitOvertakesWrite(`T 101 ${14 * ms}`, exitLine({ ts: 15 * ms, pid: 100, start: 9 * ms, ioRecords: 1 }));
    expect(beforeWrite).toBe(1);
    expect(r.finished[0]!.stdout.bytes.toString()).toBe('');
    expect(r.updated).toHaveLength(1);
    expect(r.updated[0]!.stdout.bytes.toString()).toBe(RESULT);
  });

  it('hold the call for a thread whose clone, write and end all came after the exit: the exit said its leader cloned one', () => {
    const clone = forkLine(11 * ms, 100, 101, 'thread');
    const headOnly = [...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', env: CNI_ENV, stdio: STDIO }), ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0], cpu: 0 }, CONFIG)];
    const r = replay([...headOnly, exitLine({ ts: 15 * ms, pid: 100, start: 9 * ms, ioRecords: 1, clones: 1 })], { end: 'none' });
    r.tick(r.nowMs + 500);
    expect(r.finished).toHaveLength(0);
    // The worker's CPU buffer, read late: its clone, its write, its end.
    r.feed([clone, ...workerWrite, threadExitLine(101, { ts: 14 * ms, pid: 100, ioRecords: 1, start: 11 * ms, clones: 0 })]);
    r.tick(r.nowMs + 60_000);
    expect(r.finished).toHaveLength(1);
    expect(r.updated).toHaveLength(0);
    expect(r.finished[0]).toMatchObject({ lostRecords: false, status: 'finished' });
    expect(r.finished[0]!.stdout.bytes.toString()).toBe(RESULT);
    // A thread is no process: nothing of it is left followed.
    expect(r.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });

  it('publish the call marked when a thread its exit announced never ends, after the wait for payload records', () => {
    const r = replay([...head.filter((l) => !l.startsWith('F ')), forkLine(11 * ms, 100, 101, 'thread'), exitLine({ ts: 15 * ms, pid: 100, start: 9 * ms, ioRecords: 1, clones: 1 })], { end: 'none' });
    r.tick(r.nowMs + 9_000);
    expect(r.finished).toHaveLength(0);
    r.tick(r.nowMs + 10_500);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]).toMatchObject({ lostRecords: true, lostRecordsCause: 'payloads-never-came' });
  });
});
