/**
 * The process tree of a call: a wrapper that execs the real plugin in place is
 * one call named after it, and descendants that outlive the plugin stay its
 * helpers, however late they exec or write.
 */

import { describe, expect, it } from 'vitest';
import { replay } from '../support/replay.js';
import { execLines, exitLine, forkLine, readLines, threadExitLine, writeLines } from '../support/tracer-lines.js';

const ms = 1_000_000; // one millisecond in ns
const CNI_PATH = '/opt/cni/bin';
const CNI_ENV = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'ctr-1', CNI_PATH, CNI_ARGS: 'K8S_POD_NAMESPACE=ns;K8S_POD_NAME=web-0' };
const STDIO = [501, 502, 503] as const;

describe('an exec in place continues the same call', () => {
  const wrapperThenBridge = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge-wrapper', argv: ['/opt/cni/bin/bridge-wrapper'], env: CNI_ENV, stdio: STDIO }),
    ...execLines({ ts: 11 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', argv: ['/opt/cni/bin/bridge', '--real'], env: CNI_ENV, stdio: STDIO }),
    ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, '{"cniVersion":"1.0.0"}'),
    ...writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: STDIO[1] }, '{"ips":[]}'),
    exitLine({ ts: 14 * ms, pid: 100, start: 9 * ms, code: 3 }),
  ];

  it('is one call, named after the last plugin image, with the chain of images, its exit and its bytes', () => {
    const r = replay(wrapperThenBridge);
    expect(r.started).toHaveLength(1);
    expect(r.finished).toHaveLength(1);
    const call = r.finished[0]!;
    expect(call).toMatchObject({ plugin: 'bridge', path: '/opt/cni/bin/bridge', argv: ['/opt/cni/bin/bridge', '--real'], status: 'finished', command: 'ADD' });
    expect(call.execChain).toEqual(['/opt/cni/bin/bridge-wrapper', '/opt/cni/bin/bridge']);
    expect(call.outcome?.exitCode).toBe(3);
    expect(call.stdin.bytes.toString()).toBe('{"cniVersion":"1.0.0"}');
    expect(call.stdout.bytes.toString()).toBe('{"ips":[]}');
    expect(call.helpers).toEqual([]);
    expect(call.pod).toMatchObject({ namespace: 'ns', name: 'web-0' });
  });

  it('counts an exec record delivered twice once', () => {
    const r = replay([...wrapperThenBridge.slice(0, 4), ...wrapperThenBridge.slice(2)]);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]!.execChain).toEqual(['/opt/cni/bin/bridge-wrapper', '/opt/cni/bin/bridge']);
  });

  it('keeps its name when the image exec’d is no plugin (`exec cat`), noting the program as a helper step', () => {
    const r = replay([
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/echo.sh', env: CNI_ENV, stdio: STDIO }),
      ...execLines({ ts: 11 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/usr/bin/cat', argv: ['cat'], env: CNI_ENV, stdio: STDIO }),
      exitLine({ ts: 14 * ms, pid: 100, start: 9 * ms }),
    ]);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]).toMatchObject({ plugin: 'echo.sh', execChain: ['/opt/cni/bin/echo.sh', '/usr/bin/cat'] });
    expect(r.finished[0]!.helpers.map((h) => h.path)).toEqual(['/usr/bin/cat']);
  });

  it('from a thread: the thread’s own id ends with the exec, and the call still ends with the process', () => {
    const r = replay([
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/usr/bin/python3', env: CNI_ENV, stdio: STDIO }),
      forkLine(11 * ms, 100, 101),
      // The thread 101 exec'd: the kernel gives it pid 100 and reports 101 gone.
      ...execLines({ ts: 12 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bridge', env: CNI_ENV, stdio: STDIO }),
      threadExitLine(101),
      exitLine({ ts: 14 * ms, pid: 100, start: 9 * ms }),
    ]);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]).toMatchObject({ plugin: 'bridge', status: 'finished', execChain: ['/usr/bin/python3', '/opt/cni/bin/bridge'] });
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });
});

describe('descendants that outlive the plugin', () => {
  // bridge.sh forks a subshell (200) that later forks `sleep` (201) and then writes to the plugin's stderr.
  const lines = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/bg.sh', env: CNI_ENV, stdio: STDIO }),
    forkLine(11 * ms, 100, 200),
    ...writeLines({ ts: 12 * ms, pid: 100, fd: 2, file: STDIO[2] }, 'early\n'),
    exitLine({ ts: 13 * ms, pid: 100, start: 9 * ms }),
  ];
  const late = [
    forkLine(3_000 * ms, 200, 201),
    ...execLines({ ts: 3_001 * ms, pid: 201, ppid: 200, start: 3_000 * ms, path: '/usr/bin/sleep', argv: ['sleep', '1'], env: CNI_ENV, stdio: STDIO }),
    exitLine({ ts: 4_001 * ms, pid: 201, start: 3_000 * ms }),
    ...writeLines({ ts: 4_002 * ms, pid: 200, fd: 2, file: STDIO[2] }, 'late\n'),
    exitLine({ ts: 4_003 * ms, pid: 200, start: 11 * ms }),
  ];

  it('the call ends when the plugin exits; later helpers and output are added to it, marked as after exit', () => {
    const r = replay(lines, { end: 'none' });
    r.tick(r.nowMs + 5_500); // past the grace and the wait for descendants not seen to end
    expect(r.finished).toHaveLength(1);
    const first = r.finished[0]!;
    expect(first).toMatchObject({ status: 'finished', endedAtUs: expect.any(Number), stderrAfterExitOffset: null });
    r.feed(late);
    r.tick(r.nowMs + 1_000);
    // No new call for the late `sleep`; the same call published once more with it, as an update.
    expect(r.started).toHaveLength(1);
    expect(r.finished).toHaveLength(1);
    expect(r.updated).toHaveLength(1);
    const again = r.updated[0]!;
    expect(again.id).toBe(first.id);
    expect(again.endedAtUs).toBe(first.endedAtUs);
    expect(again.durationUs).toBe(first.durationUs);
    expect(again.stderr.bytes.toString()).toBe('early\nlate\n');
    expect(again.stderrAfterExitOffset).toBe('early\n'.length);
    expect(again.helpers).toHaveLength(1);
    expect(again.helpers[0]).toMatchObject({ path: '/usr/bin/sleep', ppid: 200, endedAtUs: expect.any(Number) });
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });

  it('a daemon-like grandchild, re-parented to init before it execs, is a helper of the call, not a call', () => {
    const r = replay([
      ...lines,
      forkLine(14 * ms, 200, 300),
      exitLine({ ts: 15 * ms, pid: 200, start: 11 * ms }),
      // The live parent is 1 now; the fork records say 300 ← 200 ← 100.
      ...execLines({ ts: 2_000 * ms, pid: 300, ppid: 1, start: 14 * ms, path: '/opt/cni/bin/../../../usr/sbin/daemon', argv: ['daemon'], env: CNI_ENV, stdio: STDIO }),
      exitLine({ ts: 2_500 * ms, pid: 300, start: 14 * ms, code: 0 }),
    ]);
    expect(r.started).toHaveLength(1);
    expect(r.finished.at(-1)!.helpers.map((h) => [h.argv[0], h.ppid])).toEqual([['daemon', 200]]);
  });

  it('is not published again when the descendants only exit', () => {
    const r = replay(lines, { end: 'none' });
    r.tick(r.nowMs + 1_000);
    r.feed([exitLine({ ts: 2_000 * ms, pid: 200, start: 11 * ms })]);
    r.tick(r.nowMs + 1_000);
    expect(r.finished.map((c) => c.id)).toHaveLength(1);
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });

  it('a thread still open at the publication does not hold the call', () => {
    const r = replay([...lines.slice(0, -1), forkLine(12 * ms, 100, 150), threadExitLine(150), lines.at(-1)!, exitLine({ ts: 20 * ms, pid: 200, start: 11 * ms })]);
    expect(r.finished).toHaveLength(1);
    expect(r.assembler.heldState()).toMatchObject({ procs: 0, calls: 0 });
  });
});

describe('a delegate exec’d by a relative path, or from a long one', () => {
  const HOST_LOCAL = '/opt/cni/bin/host-local';
  const CONFIG = '{"cniVersion":"1.0.0","ipam":{"type":"host-local"}}';
  const RESULT = '{"ips":[{"address":"10.1.0.2/24"}]}';

  /** A shell plugin (100) whose child (101) execs `path` from `cwd`, writing CONFIG to it and reading RESULT back. */
  function delegating(path: string, opts: { cwd?: string; cniPath?: string; argv?: string[] } = {}): string[] {
    const env = { ...CNI_ENV, CNI_PATH: opts.cniPath ?? CNI_PATH };
    const childStdio = [601, 602, STDIO[2]] as const;
    return [
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: '/opt/cni/bin/delegate.sh', env, stdio: STDIO }),
      forkLine(11 * ms, 100, 101),
      ...execLines({ ts: 12 * ms, pid: 101, ppid: 100, start: 11 * ms, path, argv: opts.argv ?? [path], env, stdio: childStdio, ...(opts.cwd ? { cwd: opts.cwd } : {}) }),
      ...readLines({ ts: 13 * ms, pid: 101, file: childStdio[0] }, CONFIG),
      ...writeLines({ ts: 14 * ms, pid: 101, fd: 1, file: childStdio[1] }, RESULT),
      exitLine({ ts: 15 * ms, pid: 101, start: 11 * ms }),
      ...writeLines({ ts: 16 * ms, pid: 100, fd: 1, file: STDIO[1] }, RESULT),
      exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms }),
    ];
  }

  const expectDelegate = (lines: string[], path = HOST_LOCAL, plugin = 'host-local') => {
    const r = replay(lines);
    expect(r.finished).toHaveLength(2);
    const parent = r.finished.find((c) => c.pid === 100)!;
    const child = r.finished.find((c) => c.pid === 101)!;
    expect(child).toMatchObject({ path, plugin, parentId: parent.id, pathTruncated: false, status: 'finished' });
    expect(child.stdin.bytes.toString()).toBe(CONFIG);
    expect(child.stdout.bytes.toString()).toBe(RESULT);
    expect(parent).toMatchObject({ plugin: 'delegate.sh', parentId: null, helpers: [] });
    expect(parent.stdout.bytes.toString()).toBe(RESULT);
    return child;
  };

  it('`./host-local` from a CNI_PATH directory is a delegated call with its absolute path', () => {
    expectDelegate(delegating('./host-local', { cwd: '/opt/cni/bin' }));
  });

  it('`cni/bin/host-local` through a relative PATH entry is one too', () => {
    expectDelegate(delegating('cni/bin/host-local', { cwd: '/opt' }));
  });

  it('`cni/bin/host-local` through a relative CNI_PATH entry (libcni joins it as written) is one too', () => {
    expectDelegate(delegating('cni/bin/host-local', { cwd: '/opt', cniPath: 'cni/bin' }));
  });

  it('stays a helper with the path as given when the working directory walk stopped short (too deep)', () => {
    const deep = `/opt/cni/bin/${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}`;
    const r = replay(delegating(`${'../'.repeat(40)}host-local`, { cwd: deep }));
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]!.helpers.map((h) => h.path)).toEqual([`${'../'.repeat(40)}host-local`]);
  });

  it('a plugin at a path longer than the X line holds is recorded under its whole path and name, whatever its argv[0]', () => {
    const long = `/opt/${'x'.repeat(150)}/${'y'.repeat(150)}/cni/host-local`;
    const child = expectDelegate(delegating(long, { cniPath: `${CNI_PATH}:/opt/${'x'.repeat(150)}/${'y'.repeat(150)}/cni`, argv: ['ipam'] }), long);
    expect(child.argv).toEqual(['ipam']);
  });

  it('a long path whose N lines were lost is its beginning, marked cut', () => {
    const long = `/opt/${'x'.repeat(300)}/host-local`;
    const lines = [
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: long, argv: ['ipam'], env: CNI_ENV, stdio: STDIO }).filter((l) => !l.startsWith('N ')),
      exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms }),
    ];
    const r = replay(lines);
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]!.pathTruncated).toBe(true);
    expect(long.startsWith(r.finished[0]!.path)).toBe(true);
    expect(r.finished[0]!.path.length).toBe(199);
  });
});

describe('a delegate whose exec comes after its own reads and writes (its CPU buffer read late)', () => {
  // Found by the busy-node simulation (record-flow-simulation.test.ts): the fork came through one CPU's
  // buffer, the delegate's read and write through another, its exec through a third read past the reorder
  // window. Its bytes went to no stream of the plugin's call (they are on the delegate's own pipes) and
  // counted for its exit's io_records: the delegate was published finished, unmarked, with no bytes.
  const D_STDIO = [601, 602, 603] as const;
  const lines = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
    ...readLines({ ts: 11 * ms, pid: 100, file: STDIO[0] }, '{"type":"bridge"}'),
    forkLine(12 * ms, 100, 101),
    ...readLines({ ts: 14 * ms, pid: 101, file: D_STDIO[0] }, '{"type":"host-local"}'),
    ...writeLines({ ts: 15 * ms, pid: 101, fd: 1, file: D_STDIO[1] }, '{"ips":["10.0.0.2/24"]}'),
    ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, start: 12 * ms, path: `${CNI_PATH}/host-local`, env: CNI_ENV, stdio: D_STDIO }),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, ioRecords: 2 }),
    exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms, ioRecords: 1 }),
  ];

  it('has the bytes it read and wrote after its exec', () => {
    const r = replay(lines);
    const delegate = r.finished.find((c) => c.plugin === 'host-local');
    const bridge = r.finished.find((c) => c.plugin === 'bridge');
    expect(delegate).toMatchObject({ status: 'finished', parentId: bridge?.id, lostRecords: false });
    expect(delegate!.stdin.bytes.toString()).toBe('{"type":"host-local"}');
    expect(delegate!.stdout.bytes.toString()).toBe('{"ips":["10.0.0.2/24"]}');
    expect(bridge!.stdin.bytes.toString()).toBe('{"type":"bridge"}');
    expect(bridge!.stdout.bytes.length).toBe(0);
  });
});

describe('a delegate whose fork comes after its exit (its parent’s CPU buffer read late)', () => {
  // Found by the busy-node simulation: the delegate's exec and exit came through one CPU's buffer, the
  // plugin's fork of it and the delegate's read and write through another, read past the reorder window.
  // The late fork was taken for a new process under the delegate's pid: the count of payload records its
  // exit announced was forgotten, the delegate published finished, unmarked, with no bytes.
  const D_STDIO = [601, 602, 603] as const;
  const lines = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
    ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, start: 12 * ms, path: `${CNI_PATH}/host-local`, env: CNI_ENV, stdio: D_STDIO }),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, ioRecords: 2 }),
    forkLine(12 * ms, 100, 101),
    ...readLines({ ts: 14 * ms, pid: 101, file: D_STDIO[0] }, '{"type":"host-local"}'),
    ...writeLines({ ts: 15 * ms, pid: 101, fd: 1, file: D_STDIO[1] }, '{"ips":["10.0.0.2/24"]}'),
    exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms, ioRecords: 0 }),
  ];

  it('waits for the reads and writes its exit announced, and has their bytes', () => {
    const r = replay(lines);
    const delegate = r.finished.find((c) => c.plugin === 'host-local');
    expect(delegate).toMatchObject({ status: 'finished', lostRecords: false });
    expect(delegate!.stdin.bytes.toString()).toBe('{"type":"host-local"}');
    expect(delegate!.stdout.bytes.toString()).toBe('{"ips":["10.0.0.2/24"]}');
  });
});

describe('a pid that was a thread whose end was lost, reused by a delegate', () => {
  // Found by the busy-node simulation: bridge's worker thread 105 ended unseen (its T line lost), then a
  // delegate of another call got pid 105. The stale thread entry was kept as the delegate's own fork (its
  // recorded parent gone, as for a re-parented child): the delegate was published under bridge's call.
  const D_STDIO = [601, 602, 603] as const;
  const P_STDIO = [701, 702, 703] as const;
  const before = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: { ...CNI_ENV, CNI_CONTAINERID: 'a' }, stdio: STDIO }),
    forkLine(11 * ms, 100, 105),
    exitLine({ ts: 12 * ms, pid: 100, start: 9 * ms }),
    ...execLines({ ts: 20 * ms, pid: 200, ppid: 1, start: 19 * ms, path: `${CNI_PATH}/ptp`, env: { ...CNI_ENV, CNI_CONTAINERID: 'b' }, stdio: P_STDIO }),
  ];
  const fork = forkLine(21 * ms, 200, 105);
  const delegate = execLines({ ts: 22 * ms, pid: 105, ppid: 200, start: 21 * ms, path: `${CNI_PATH}/host-local`, env: { ...CNI_ENV, CNI_CONTAINERID: 'b' }, stdio: D_STDIO });
  const after = [exitLine({ ts: 23 * ms, pid: 105, start: 21 * ms }), exitLine({ ts: 24 * ms, pid: 200, start: 19 * ms })];

  it.each([
    ['its fork before its exec', [fork, ...delegate]],
    ['its fork after its exec (another CPU buffer)', [...delegate, fork]],
  ])('is the delegate of the call that ran it: %s', (_, middle) => {
    const r = replay([...before, ...middle, ...after], { msPerLine: 500 });
    const ptp = r.finished.find((c) => c.plugin === 'ptp');
    const hostLocal = r.finished.filter((c) => c.plugin === 'host-local');
    expect(hostLocal).toHaveLength(1);
    expect(hostLocal[0]!.parentId).toBe(ptp!.id);
  });
});

describe('a delegate or helper whose plugin’s exec was lost (a full buffer)', () => {
  // Found by the busy-node simulation: the plugin's X line was dropped with the rest of a full CPU buffer, and
  // its delegate (or the `ip` it ran) came in as a process with no parent known: it was published as a call of
  // its own, unmarked. The tracer marks the parent's pid (`+`) when the parent is traced: such an exec waits
  // for its parent, and when none comes it is still published, marked: its parent call is unknown.
  const D_STDIO = [601, 602, 603] as const;
  const lostPlugin = (path: string) => [
    ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, parentTraced: true, start: 12 * ms, path, env: CNI_ENV, stdio: D_STDIO }),
    ...readLines({ ts: 14 * ms, pid: 101, file: D_STDIO[0] }, '{"type":"host-local"}'),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, ioRecords: 1 }),
  ];

  it.each([
    ['a delegate', `${CNI_PATH}/host-local`],
    ['a helper', '/usr/sbin/ip'],
  ])('%s is published marked tracer-lost, with what it did', (_, path) => {
    const r = replay(lostPlugin(path), { end: 'flushAll' });
    expect(r.finished).toHaveLength(1);
    expect(r.finished[0]).toMatchObject({ path, parentId: null, lostRecords: true, lostRecordsCause: 'tracer-lost' });
  });

  it('is no call of its own when its plugin’s exec comes late instead (another CPU’s buffer)', () => {
    const plugin = execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO });
    const r = replay([...lostPlugin(`${CNI_PATH}/host-local`), ...plugin, exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms })]);
    const bridge = r.finished.find((c) => c.plugin === 'bridge');
    const delegate = r.finished.find((c) => c.plugin === 'host-local');
    expect(delegate).toMatchObject({ parentId: bridge!.id, lostRecords: false });
    expect(delegate!.stdin.bytes.toString()).toBe('{"type":"host-local"}');
  });

  it('an untraced parent (the runtime) makes a call without waiting', () => {
    const r = replay([
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
      exitLine({ ts: 11 * ms, pid: 100, start: 9 * ms }),
    ], { end: 'none' });
    r.tick(r.nowMs + 1_000);
    expect(r.finished).toMatchObject([{ plugin: 'bridge', lostRecords: false }]);
  });
});

describe('a fork record replayed after its child exec’d and exited', () => {
  // Found by the busy-node simulation: the plugin's fork of its delegate came while the plugin was unknown
  // (its exec in a CPU buffer read late) and was kept without its time. When the plugin's exec came, the
  // delegate (waiting for it) went on and exited first, then the kept fork was replayed: undated, it was
  // taken for a new process under the delegate's pid, and a late read of the delegate's worker thread went
  // to that phantom: the delegate was published finished, unmarked, with part of its stdin.
  const D_STDIO = [601, 602, 603] as const;
  const lines = [
    forkLine(12 * ms, 100, 101),
    ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, parentTraced: true, start: 12 * ms, path: `${CNI_PATH}/host-local`, env: CNI_ENV, stdio: D_STDIO }),
    forkLine(13.5 * ms, 101, 102),
    ...readLines({ ts: 14 * ms, pid: 101, file: D_STDIO[0] }, '{"type":'),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, ioRecords: 1 }),
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
    ...readLines({ ts: 15 * ms, pid: 101, tid: 102, file: D_STDIO[0] }, '"host-local"}'),
    exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms }),
  ];

  it('is the child’s own fork, dated: the late read goes to the delegate', () => {
    const r = replay(lines);
    const delegate = r.events.filter((e) => e.call.plugin === 'host-local').at(-1)!.call;
    expect(delegate.stdin.bytes.toString()).toBe('{"type":"host-local"}');
  });
});

describe('a delegate whose exit comes before its exec (its exec through a CPU buffer read late)', () => {
  // Found by the busy-node simulation (lagging runs, nothing lost): the plugin's fork of the delegate came first,
  // then the delegate's exit, then its exec. The exit ended the fork entry; the exec made a call of it that
  // nothing ended: it stayed running until the liveness sweep gave up on it (incomplete, though whole).
  const D_STDIO = [601, 602, 603] as const;
  const lines = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, parentTraced: false, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
    forkLine(12 * ms, 100, 101),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, code: 2, ioRecords: 1 }),
    ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, parentTraced: true, start: 12 * ms, path: `${CNI_PATH}/host-local`, env: CNI_ENV, stdio: D_STDIO }),
    ...writeLines({ ts: 14 * ms, pid: 101, fd: 1, file: D_STDIO[1] }, '{"code":11}'),
    exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms }),
  ];

  it('ends with that exit: finished, its exit code and its bytes', () => {
    const r = replay(lines);
    const delegate = r.finished.find((c) => c.plugin === 'host-local');
    expect(delegate).toMatchObject({ status: 'finished', lostRecords: false, outcome: { exitCode: 2 } });
    expect(delegate!.stdout.bytes.toString()).toBe('{"code":11}');
  });
});

describe('a delegate whose fork and exit come before its plugin’s publication, and its exec after', () => {
  // Found by the busy-node simulation (lagging runs, nothing lost): the delegate's exec was in a CPU buffer read
  // late, past its exit and past the publication of its plugin's call, which took the exited fork entry with it.
  // The exec made a call that nothing ended: it stayed running, then ended incomplete.
  const D_STDIO = [601, 602, 603] as const;
  const lines = [
    ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, parentTraced: false, start: 9 * ms, path: `${CNI_PATH}/bridge`, env: CNI_ENV, stdio: STDIO }),
    forkLine(12 * ms, 100, 101),
    ...writeLines({ ts: 14 * ms, pid: 101, fd: 1, file: D_STDIO[1] }, '{"code":11}'),
    exitLine({ ts: 16 * ms, pid: 101, start: 12 * ms, code: 2, ioRecords: 1 }),
    exitLine({ ts: 17 * ms, pid: 100, start: 9 * ms }),
  ];
  const lateExec = execLines({ ts: 13 * ms, pid: 101, ppid: 100, parentTraced: true, start: 12 * ms, path: `${CNI_PATH}/host-local`, env: CNI_ENV, stdio: D_STDIO });

  it('is the delegate of that call, ended by that exit, with its bytes', () => {
    const r = replay(lines, { end: 'none' });
    r.tick(r.nowMs + 2_000);
    const bridge = r.finished.find((c) => c.plugin === 'bridge');
    expect(bridge).toBeDefined();
    r.feed(lateExec);
    r.tick(r.nowMs + 2_000);
    const delegate = r.finished.find((c) => c.plugin === 'host-local');
    expect(delegate).toMatchObject({ status: 'finished', parentId: bridge!.id, lostRecords: false, outcome: { exitCode: 2 } });
    expect(delegate!.stdout.bytes.toString()).toBe('{"code":11}');
  });
});
