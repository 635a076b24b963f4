import { describe, expect, it } from 'vitest';
import { CANARY_COMMAND, CANARY_OUTPUT } from '../../collector/tracer/canary-marks.js';
import { callSucceeded, type CniCall } from '../../collector/types.js';
import { EPOCH_OFFSET_US, FAR_FUTURE_MS, onlyCall, payload, replay, replayFixture, traceLines } from '../support/replay.js';
import { ALLOWED_FIXTURE_ENV, RECORDED, rawEnvNames } from '../support/recorded.js';
import { createPipeline } from '../support/tracer-pipeline.js';
import { SAMPLE_CNI_ENV, execLines, exitLine, forkLine, helloLine, readLines, threadExitLine, writeLines } from '../support/tracer-lines.js';

const FIXTURES = ['bridge.trace', 'failing.trace', 'shell.trace', 'sigkill.trace', 'version.trace', 'light.trace', 'running.trace', 'bytes.trace'];

const OK = { exitCode: 0, signal: null, coreDumped: false };
const FAILED = { exitCode: 1, signal: null, coreDumped: false };
const KILLED = { exitCode: null, signal: 9, coreDumped: false };

const isTopLevel = (c: CniCall): boolean => c.parentId === null;

/** The parent's name a `P` line of the trace gives for this exec, if the recorded program printed one. */
function parentCommInTrace(trace: string, pid: number): string | null {
  const line = traceLines(trace).find((l) => l.startsWith(`P ${pid} `));
  return line === undefined ? null : line.slice(`P ${pid} `.length);
}
const byCmd = (plugin: string, command: string) => (c: CniCall) => c.plugin === plugin && c.command === command;

function expectEnvOnlyCni(call: CniCall): void {
  for (const name of Object.keys(call.env)) expect(name).toMatch(/^(CNI_[A-Z_]+|TRACEPARENT|TRACESTATE)$/);
}

function expectStream(actual: CniCall['stdin'], expected: Buffer): void {
  // Buffer compare first: a byte-exact mismatch shows as text in the diff.
  expect(actual.bytes.toString('latin1')).toBe(expected.toString('latin1'));
  expect(Buffer.compare(actual.bytes, expected)).toBe(0);
  expect(actual.totalBytes).toBe(expected.length);
  expect(actual.truncated).toBe(false);
}

function expectEmpty(stream: CniCall['stdin']): void {
  expect(stream.bytes.length).toBe(0);
  expect(stream.totalBytes).toBe(0);
  expect(stream.truncated).toBe(false);
}

describe('recorded fixtures', () => {
  it.each(FIXTURES)('%s parses without errors and holds only allowed env names', (name) => {
    const lines = traceLines(name);
    const r = replay(lines);
    expect(r.parseErrors).toEqual([]);
    for (const env of rawEnvNames(lines)) expect(env).toMatch(ALLOWED_FIXTURE_ENV);
    expect(r.framer.strayChunks).toBe(0);
    expect(r.assembler.counters.unattributed).toBe(0);
    expect(r.assembler.counters.lostEvents).toBe(0);
    // After the far-future tick nothing that exited is left open.
    expect(r.finished.filter((c) => c.status === 'finished').every((c) => c.endedAtUs !== null)).toBe(true);
  });
});

describe('bridge + host-local ADD, CHECK, DEL (bridge.trace)', () => {
  const r = replayFixture('bridge.trace');
  const calls = r.finished;
  const top = calls.filter(isTopLevel);

  it('finishes three bridge calls and three delegated host-local calls', () => {
    expect(calls).toHaveLength(6);
    expect(r.started).toHaveLength(6);
    expect(top.map((c) => c.command)).toEqual(['ADD', 'CHECK', 'DEL']);
    expect(top.every((c) => c.plugin === 'bridge')).toBe(true);
    expect(new Set(calls.map((c) => c.id)).size).toBe(6);
    expect(r.assembler.openCallCount).toBe(0);
    expect(r.assembler.counters).toMatchObject({ callsStarted: 6, callsFinished: 6, canaries: 0 });
  });

  it.each(['ADD', 'CHECK', 'DEL'])('bridge %s: identity, pod, outcome, byte-exact stdin/stdout', (command) => {
    const call = onlyCall(top, byCmd('bridge', command), `bridge ${command}`);
    const file = `bridge-${command.toLowerCase()}`;
    expect(call).toMatchObject({
      path: RECORDED.bridgePath,
      plugin: 'bridge',
      argv: [RECORDED.bridgePath],
      command,
      containerId: RECORDED.containerId,
      netns: RECORDED.netns(1),
      ifname: 'eth0',
      cniArgs: RECORDED.cniArgs,
      pod: {
        namespace: RECORDED.podNamespace,
        name: RECORDED.podName,
        uid: RECORDED.podUid,
        infraContainerId: RECORDED.containerId,
      },
      isVersionProbe: false,
      status: 'finished',
      incompleteReason: null,
      captureMode: 'full',
      lostRecords: false,
      outcome: OK,
      helpers: [],
      parentId: null,
    });
    expect(callSucceeded(call)).toBe(true);
    // The runtime that exec'd it (record.sh's bash), named by the tracer if its program reports it.
    expect(call.parentProcess).toEqual({ pid: call.ppid, comm: parentCommInTrace('bridge.trace', call.pid), exe: null });
    expectStream(call.stdin, payload(`${file}.stdin`));
    expectStream(call.stdout, payload(`${file}.stdout`));
    expectEmpty(call.stderr);
    expect(call.endedAtUs! - call.startedAtUs).toBe(call.durationUs);
    expect(call.durationUs).toBeGreaterThan(0);
    expect(call.startedAtUs).toBeGreaterThan(EPOCH_OFFSET_US);
  });

  it('keeps only CNI_* and trace-context env; TRACEPARENT on the ADD only', () => {
    for (const call of calls) expectEnvOnlyCni(call);
    const add = onlyCall(top, byCmd('bridge', 'ADD'), 'bridge ADD');
    expect(add.env).toEqual({
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: RECORDED.containerId,
      CNI_NETNS: RECORDED.netns(1),
      CNI_ARGS: RECORDED.cniArgs,
      CNI_IFNAME: 'eth0',
      CNI_PATH: '/usr/lib/cni',
      TRACEPARENT: RECORDED.traceParent,
    });
    expect(add.traceParent).toBe(RECORDED.traceParent);
    expect(add.env).not.toHaveProperty('PATH');
    const check = onlyCall(top, byCmd('bridge', 'CHECK'), 'bridge CHECK');
    expect(check.traceParent).toBeNull();
    expect(check.env).not.toHaveProperty('TRACEPARENT');
  });

  it.each(['ADD', 'CHECK', 'DEL'])('host-local %s is a child call of bridge %s with its own stdin/stdout', (command) => {
    const parent = onlyCall(top, byCmd('bridge', command), `bridge ${command}`);
    const child = onlyCall(calls, byCmd('host-local', command), `host-local ${command}`);
    expect(child).toMatchObject({
      parentId: parent.id,
      parentProcess: null,
      ppid: parent.pid,
      path: RECORDED.hostLocalPath,
      argv: [RECORDED.hostLocalPath],
      containerId: RECORDED.containerId,
      netns: RECORDED.netns(1),
      ifname: 'eth0',
      pod: parent.pod,
      outcome: OK,
      status: 'finished',
      helpers: [],
    });
    expect(child.id).not.toBe(parent.id);
    expectEnvOnlyCni(child);
    // bridge delegates with the very bytes it was given.
    expectStream(child.stdin, payload(`bridge-${command.toLowerCase()}.stdin`));
    expectEmpty(child.stderr);
    // The delegated call runs inside the parent's lifetime.
    expect(child.startedAtUs).toBeGreaterThan(parent.startedAtUs);
    expect(child.endedAtUs!).toBeLessThan(parent.endedAtUs!);
    // Its parent was published first, so a consumer can always resolve parentId.
    const startedAt = (id: string): number => r.events.findIndex((e) => e.type === 'call.started' && e.call.id === id);
    expect(startedAt(parent.id)).toBeLessThan(startedAt(child.id));
  });

  it('host-local ADD returns the IPAM result bridge builds its result from', () => {
    const child = onlyCall(calls, byCmd('host-local', 'ADD'), 'host-local ADD');
    const ipam = JSON.parse(child.stdout.bytes.toString('utf8')) as { ips: Array<{ address: string; gateway: string }> };
    const bridgeResult = JSON.parse(payload('bridge-add.stdout').toString('utf8')) as { ips: Array<{ address: string }> };
    expect(ipam.ips[0]!.address).toBe(bridgeResult.ips[0]!.address);
    expect(child.stdout.truncated).toBe(false);
    expect(child.stdout.totalBytes).toBe(child.stdout.bytes.length);
    // CHECK and DEL of host-local print nothing.
    expectEmpty(onlyCall(calls, byCmd('host-local', 'DEL'), 'host-local DEL').stdout);
    expectEmpty(onlyCall(calls, byCmd('host-local', 'CHECK'), 'host-local CHECK').stdout);
  });

  it('publishes call.started for each call before its call.finished', () => {
    for (const call of calls) {
      const started = r.events.findIndex((e) => e.type === 'call.started' && e.call.id === call.id);
      const finished = r.events.findIndex((e) => e.type === 'call.finished' && e.call.id === call.id);
      expect(started).toBeGreaterThanOrEqual(0);
      expect(started).toBeLessThan(finished);
      const s = r.events[started]!.call;
      expect(s.status).toBe('running');
      expect(s.outcome).toBeNull();
    }
  });

  it('holds finished calls for a grace period when one is set, then publishes them on tick', () => {
    const held = replayFixture('bridge.trace', { tickEachLine: false, end: 'none', finalizeGraceMs: 250 });
    expect(held.finished).toHaveLength(0);
    expect(held.assembler.openCallCount).toBe(6);
    expect(held.assembler.runningCalls()).toEqual([]);
    // Every exit in the trace came within the last 250 lines (1 ms each): all still held.
    expect(held.tick(held.nowMs)).toHaveLength(0);
    expect(held.tick(held.nowMs + 250)).toHaveLength(6);
    expect(held.assembler.openCallCount).toBe(0);
  });
});

describe('failing calls (failing.trace)', () => {
  const r = replayFixture('failing.trace');
  const top = r.finished.filter(isTopLevel);

  it('invalid JSON: exit code 1, CNI error JSON on stdout, no delegation', () => {
    const call = top.find((c) => c.stdin.bytes.equals(payload('failing-badjson.stdin')));
    expect(call).toBeDefined();
    expect(call!).toMatchObject({ plugin: 'bridge', command: 'ADD', status: 'finished', outcome: FAILED, netns: RECORDED.netns(2) });
    expect(callSucceeded(call!)).toBe(false);
    expectStream(call!.stdin, payload('failing-badjson.stdin'));
    expectStream(call!.stdout, payload('failing-badjson.stdout'));
    expect(JSON.parse(call!.stdout.bytes.toString('utf8'))).toMatchObject({ code: 6 });
    expect(r.finished.filter((c) => c.parentId === call!.id)).toEqual([]);
  });

  it('IPAM failure: host-local fails as a child call, bridge relays its error', () => {
    const parent = top.find((c) => c.stdin.bytes.equals(payload('failing-ipam.stdin')));
    expect(parent).toBeDefined();
    expect(parent!.outcome).toEqual(FAILED);
    expectStream(parent!.stdout, payload('failing-ipam.stdout'));
    expect(JSON.parse(parent!.stdout.bytes.toString('utf8'))).toMatchObject({ code: 999, msg: 'no IP ranges specified' });
    const child = onlyCall(r.finished, (c) => c.parentId === parent!.id, 'host-local child');
    expect(child).toMatchObject({ plugin: 'host-local', command: 'ADD', outcome: FAILED, status: 'finished' });
    expectStream(child.stdin, payload('failing-ipam.stdin'));
    expect(JSON.parse(child.stdout.bytes.toString('utf8'))).toMatchObject({ code: 999 });
  });

  it('has exactly those three calls', () => {
    expect(r.finished).toHaveLength(3);
  });
});

describe('bash plugin with helpers (shell.trace)', () => {
  const r = replayFixture('shell.trace');
  const add = onlyCall(r.finished, byCmd('tc-shaper.sh', 'ADD'), 'tc-shaper ADD');
  const del = onlyCall(r.finished, byCmd('tc-shaper.sh', 'DEL'), 'tc-shaper DEL');

  it('records two top-level calls of the script, found through CNI_PATH', () => {
    expect(r.finished).toHaveLength(2);
    for (const call of [add, del]) {
      expect(call.parentId).toBeNull();
      expect(call.path.endsWith(`${RECORDED.pluginsDirSuffix}/tc-shaper.sh`)).toBe(true);
      // The kernel runs the script through its #! interpreter.
      expect(call.argv).toEqual(['/bin/bash', call.path]);
      expect(call.env.CNI_PATH).toBe(`/usr/lib/cni:${call.path.slice(0, -'/tc-shaper.sh'.length)}`);
      expect(call).toMatchObject({ containerId: RECORDED.containerId, netns: RECORDED.netns(3), ifname: 'eth0', outcome: OK });
      expect(call.pod?.name).toBe(RECORDED.podName);
      expectEnvOnlyCni(call);
    }
  });

  it('keeps the full stdin although cat, not the script, read it', () => {
    expectStream(add.stdin, payload('shell-add.stdin'));
    expectStream(del.stdin, payload('shell-del.stdin'));
    // jq's here-strings are other pipes: they are not the call's stdin.
    expect(add.stdin.totalBytes).toBe(payload('shell-add.stdin').length);
  });

  it('stdout is the result only; the `>&2` log line lands in stderr', () => {
    expectStream(add.stdout, payload('shell-add.stdout'));
    expect(add.stderr.bytes.toString('utf8')).toBe('tc-shaper: eth0 in cnirec-fx-3 shaped to 10mbit: "tbf"\n');
    expect(add.stderr.truncated).toBe(false);
    expectStream(del.stdout, payload('shell-del.stdout'));
    expectEmpty(del.stderr);
  });

  it('lists the helpers (cat, jq, tc) with their argv and outcome, in exec order', () => {
    expect(add.helpers.map((h) => [h.path, ...h.argv])).toEqual([
      ['/usr/bin/cat', 'cat'],
      ['/usr/bin/jq', 'jq', '-r', '.cniVersion // "1.0.0"'],
      ['/usr/bin/jq', 'jq', '-r', '.rate // "10mbit"'],
      ['/usr/bin/jq', 'jq', '-r', '.burst // "32kbit"'],
      ['/usr/bin/jq', 'jq', '-r', '.latency // "50ms"'],
      ['/usr/sbin/tc', 'tc', '-netns', 'cnirec-fx-3', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', '10mbit', 'burst', '32kbit', 'latency', '50ms'],
      ['/usr/sbin/tc', 'tc', '-netns', 'cnirec-fx-3', '-j', 'qdisc', 'show', 'dev', 'eth0'],
      ['/usr/bin/jq', 'jq', '-c', '.[0].kind'],
      ['/usr/bin/jq', 'jq', '-c', '--arg', 'v', '1.0.0', '--arg', 'ifname', 'eth0', '--arg', 'netns', RECORDED.netns(3),
        '.prevResult // {cniVersion: $v, interfaces: [{name: $ifname, sandbox: $netns}], dns: {}}'],
    ]);
    for (const h of add.helpers) {
      expect(h.outcome).toEqual(OK);
      expect(h.endedAtUs! >= h.startedAtUs).toBe(true);
      expect(h.startedAtUs).toBeGreaterThanOrEqual(add.startedAtUs);
      expect(h.endedAtUs!).toBeLessThanOrEqual(add.endedAtUs!);
    }
    expect(del.helpers.map((h) => h.argv[0])).toEqual(['cat', 'jq', 'jq', 'jq', 'jq', 'tc']);
    expect(del.helpers.at(-1)!.argv).toEqual(['tc', '-netns', 'cnirec-fx-3', 'qdisc', 'del', 'dev', 'eth0', 'root']);
  });

  it("captures a helper's own stdout when it is not the plugin's (command substitutions)", () => {
    const [cat, jqVersion, jqRate] = add.helpers;
    // cat copies the config into $(…): its stdout is that pipe, not the call's stdout.
    expect(cat!.stdout.bytes.equals(payload('shell-add.stdin'))).toBe(true);
    expect(cat!.ppid).toBe(add.pid);
    expect(jqVersion!.stdout.bytes.toString()).toBe('1.0.0\n');
    expect(jqRate!.stdout.bytes.toString()).toBe('10mbit\n');
    // jq runs in a subshell: its parent is that fork, not the script.
    expect(jqRate!.ppid).not.toBe(add.pid);
    const show = add.helpers[6]!;
    expect(JSON.parse(show.stdout.bytes.toString())).toEqual([expect.objectContaining({ kind: 'tbf', handle: expect.any(String) })]);
    // The last jq writes straight to the call's stdout: nothing of its own.
    expectEmpty(add.helpers[8]!.stdout);
  });
});

describe('SIGKILL (sigkill.trace)', () => {
  const r = replayFixture('sigkill.trace');
  const call = onlyCall(r.finished, byCmd('sleeper.sh', 'ADD'), 'sleeper ADD');

  it('ends with signal 9, no exit code, status finished', () => {
    expect(r.finished).toHaveLength(1);
    expect(call.outcome).toEqual(KILLED);
    expect(call.status).toBe('finished');
    expect(call.incompleteReason).toBeNull();
    expect(callSucceeded(call)).toBe(false);
  });

  it('keeps what it read and wrote before it died', () => {
    expectStream(call.stdin, payload('sigkill.stdin'));
    expectStream(call.stderr, payload('sigkill.stderr'));
    expectEmpty(call.stdout);
  });

  it('lists cat (exit 0) and sleep (killed with the group)', () => {
    expect(call.helpers.map((h) => h.argv)).toEqual([['cat'], ['sleep', '30']]);
    expect(call.helpers[0]!.outcome).toEqual(OK);
    // cat >/dev/null: its stdout is not the plugin's, so it is its own.
    expect(call.helpers[0]!.stdout.bytes.equals(payload('sigkill.stdin'))).toBe(true);
    expect(call.helpers[1]!.outcome).toEqual(KILLED);
  });
});

describe('VERSION probe (version.trace)', () => {
  const r = replayFixture('version.trace');

  it('is marked as a version probe with libcni’s dummy args', () => {
    expect(r.finished).toHaveLength(1);
    const call = r.finished[0]!;
    expect(call).toMatchObject({
      plugin: 'bridge',
      command: 'VERSION',
      isVersionProbe: true,
      containerId: null,
      netns: 'dummy',
      ifname: 'dummy',
      cniArgs: '',
      pod: null,
      outcome: OK,
      status: 'finished',
    });
    expect(call.env.CNI_PATH).toBe('dummy');
    expectStream(call.stdout, payload('version.stdout'));
    // bridge answers VERSION without reading the {"cniVersion":…} libcni sends.
    expectEmpty(call.stdin);
    expect(payload('version.stdin').length).toBeGreaterThan(0);
  });
});

describe('light mode (light.trace)', () => {
  const r = replayFixture('light.trace');

  it('records the same calls, with their tree and outcome, but no payloads', () => {
    expect(r.finished).toHaveLength(6);
    const top = r.finished.filter(isTopLevel);
    expect(top.map((c) => c.command)).toEqual(['ADD', 'CHECK', 'DEL']);
    for (const call of r.finished) {
      expect(call.captureMode).toBe('light');
      expect(call.outcome).toEqual(OK);
      expect(call.containerId).toBe(RECORDED.containerId);
      expect(call.netns).toBe(RECORDED.netns(6));
      expectEmpty(call.stdin);
      expectEmpty(call.stdout);
      expectEmpty(call.stderr);
    }
    for (const parent of top) {
      const child = onlyCall(r.finished, (c) => c.parentId === parent.id, `child of ${parent.command}`);
      expect(child).toMatchObject({ plugin: 'host-local', command: parent.command });
    }
  });

  it('takes the mode from the hello line, whatever the assembler was built with', () => {
    const forced = replayFixture('light.trace', { captureMode: 'full' });
    expect(forced.finished.every((c) => c.captureMode === 'light')).toBe(true);
  });
});

describe('tracer stopped while a plugin runs (running.trace)', () => {
  it('the call stays running until flushAll, which marks it incomplete', () => {
    const r = replayFixture('running.trace');
    expect(r.parseErrors).toEqual([]);
    expect(r.finished).toHaveLength(0);
    expect(r.started).toHaveLength(1);
    const running = r.assembler.runningCalls();
    expect(running).toHaveLength(1);
    expect(running[0]!.pid).toBe(r.started[0]!.pid);
    const [ev] = r.flushAll('tracer stopped');
    expect(ev!.type).toBe('call.finished');
    expect(ev!.call).toMatchObject({ status: 'incomplete', incompleteReason: 'tracer stopped', outcome: null, endedAtUs: null, durationUs: null });
    expectStream(ev!.call.stdin, payload('sigkill.stdin'));
    expect(ev!.call.helpers.map((h) => [h.argv[0], h.outcome])).toEqual([
      ['cat', OK],
      ['sleep', null],
    ]);
    expect(r.assembler.openCallCount).toBe(0);
  });

  it('processGone ends the call the same way', () => {
    const r = replayFixture('running.trace');
    const [running] = r.assembler.runningCalls();
    const before = r.events.length;
    r.assembler.processGone(running!.pid, 'not-its-start', 'gone');
    expect(r.events.length).toBe(before);
    r.assembler.processGone(running!.pid, running!.start, 'process gone');
    const [ev] = r.events.slice(before);
    expect(ev!.call).toMatchObject({ status: 'incomplete', incompleteReason: 'process gone' });
  });
});

// ---------------------------------------------------------------------------
// Synthetic scenarios: orderings and failures the recordings cannot force.

const CNI_ENV = SAMPLE_CNI_ENV;
const STDIO = [501, 502, 503] as const;
const ms = 1_000_000; // one millisecond in ns

function plugin(pid: number, start: number, ts: number, extra: Partial<Parameters<typeof execLines>[0]> = {}): string[] {
  return execLines({ ts, pid, ppid: 1, start, path: '/opt/cni/bin/bridge', env: { PATH: '/usr/bin', ...CNI_ENV }, stdio: STDIO, ...extra });
}

describe('synthetic: pid reuse', () => {
  it('a new exec under the same pid with another start ends the old call as incomplete', () => {
    const r = replay([
      helloLine('full'),
      ...plugin(100, 10 * ms, 11 * ms),
      ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, '{"a":1}'),
      // exit of the first process lost; the pid comes back as a new process
      ...plugin(100, 50 * ms, 51 * ms, { env: { ...CNI_ENV, CNI_COMMAND: 'DEL' } }),
      exitLine({ ts: 60 * ms, pid: 100, start: 50 * ms }),
    ]);
    expect(r.finished).toHaveLength(2);
    const [old, fresh] = r.finished;
    expect(old).toMatchObject({ command: 'ADD', status: 'incomplete', outcome: null, endedAtUs: null });
    expect(old!.incompleteReason).toMatch(/pid reused/);
    expect(old!.stdin.bytes.toString()).toBe('{"a":1}');
    expect(fresh).toMatchObject({ command: 'DEL', status: 'finished', outcome: OK, incompleteReason: null });
    expect(fresh!.startedAtUs).toBe(51_000 + EPOCH_OFFSET_US);
    expect(fresh!.endedAtUs).toBe(60_000 + EPOCH_OFFSET_US);
  });

  it('an exit whose start does not match the process is ignored', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), exitLine({ ts: 20 * ms, pid: 100, start: 99 * ms })]);
    expect(r.finished).toHaveLength(0);
    expect(r.assembler.runningCalls()).toHaveLength(1);
  });
});

describe('synthetic: lost records', () => {
  it('marks the calls open when bpftrace reports lost events, not later ones', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      'Lost 3 events',
      exitLine({ ts: 20 * ms, pid: 100, start: 10 * ms }),
      ...plugin(200, 30 * ms, 31 * ms),
      exitLine({ ts: 40 * ms, pid: 200, start: 30 * ms }),
    ]);
    expect(r.parseErrors).toEqual([]);
    expect(r.assembler.counters.lostEvents).toBe(3);
    expect(r.finished.map((c) => [c.pid, c.lostRecords])).toEqual([
      [100, true],
      [200, false],
    ]);
  });
});

describe('synthetic: out-of-order delivery', () => {
  const config = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'bridge', pad: 'x'.repeat(400) }));
  const result = Buffer.from(JSON.stringify({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.2/24' }], pad: 'y'.repeat(300) }));

  it('an exit delivered before the last data chunk (within the grace period) still gives the whole payload', () => {
    expect(config.length).toBeGreaterThan(400);
    const read = readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, config);
    const write = writeLines({ ts: 13 * ms, pid: 100, tid: 101, fd: 1, file: STDIO[1] }, result);
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      forkLine(11.5 * ms, 100, 101),
      ...read,
      write[0]!,
      write[1]!,
      // the main thread's exit came through another CPU's buffer first
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
      ...write.slice(2),
      threadExitLine(101),
    ]);
    expect(r.finished).toHaveLength(1);
    const call = r.finished[0]!;
    expect(call.status).toBe('finished');
    expectStream(call.stdin, config);
    expectStream(call.stdout, result);
    expect(r.framer.strayChunks).toBe(0);
    expect(r.assembler.counters.unattributed).toBe(0);
  });

  it('a thread exit delivered before its write’s last chunk does not cut the payload', () => {
    const write = writeLines({ ts: 13 * ms, pid: 100, tid: 101, fd: 1, file: STDIO[1] }, result);
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      forkLine(11.5 * ms, 100, 101),
      write[0]!,
      write[1]!,
      threadExitLine(101),
      ...write.slice(2),
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
    ]);
    expectStream(r.finished[0]!.stdout, result);
  });

  it('segments from several threads are ordered by their timestamps, not their arrival', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      forkLine(11.1 * ms, 100, 101),
      ...writeLines({ ts: 13 * ms, pid: 100, tid: 101, fd: 1, file: STDIO[1] }, 'second'),
      ...writeLines({ ts: 12 * ms, pid: 100, tid: 100, fd: 1, file: STDIO[1] }, 'first-'),
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
    ]);
    expect(r.finished[0]!.stdout.bytes.toString()).toBe('first-second');
  });

  it('a call is held past its grace period until the payload records its exit announced have come', () => {
    const late = readLines({ ts: 12 * ms, pid: 100, file: STDIO[0], cpu: 1 }, config);
    const r = replay([...plugin(100, 10 * ms, 11 * ms), exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms, ioRecords: 1 })], {
      tickEachLine: false,
      end: 'none',
    });
    // Long past the 250 ms grace: the read the exit counted is still in another CPU's buffer.
    expect(r.tick(r.nowMs + 5_000)).toEqual([]);
    r.feed(late);
    const [done] = r.tick(r.nowMs + 5_001);
    expect(done?.type).toBe('call.finished');
    const call = done!.call;
    expectStream(call.stdin, config);
    expect(call.lostRecords).toBe(false);
  });

  it('a plugin is published after its delegate, whose announced payload records came late', () => {
    const delegateRead = readLines({ ts: 12.5 * ms, pid: 200, file: 601, cpu: 1 }, config);
    const r = replay(
      [
        ...plugin(100, 10 * ms, 11 * ms),
        forkLine(11.5 * ms, 100, 200),
        ...execLines({ ts: 12 * ms, pid: 200, ppid: 100, start: 12 * ms, path: '/opt/cni/bin/host-local', env: CNI_ENV, stdio: [601, 602, 603] }),
        exitLine({ ts: 13 * ms, pid: 200, start: 12 * ms, ioRecords: 1 }),
        exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
      ],
      { tickEachLine: false, end: 'none' },
    );
    expect(r.tick(r.nowMs + 1_000).filter((e) => e.type === 'call.finished')).toEqual([]);
    r.feed(delegateRead);
    const finished = r.tick(r.nowMs + 1_001).filter((e) => e.type === 'call.finished').map((e) => e.call);
    finished.push(...r.tick(r.nowMs + 1_100).filter((e) => e.type === 'call.finished').map((e) => e.call));
    expect(finished.map((c) => c.plugin)).toEqual(['host-local', 'bridge']);
    expectStream(finished[0]!.stdin, config);
    expect(finished[0]!.parentId).toBe(finished[1]!.id);
  });

  it('a call marked lostRecords before its exec came (its exit first, its tracer dead) is published marked', () => {
    const r = replay([exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms })], { tickEachLine: false, end: 'none' });
    r.assembler.markLostRecords(100);
    r.feed(plugin(100, 10 * ms, 11 * ms));
    const [done] = r.tick(r.nowMs + 1_000).filter((e) => e.type === 'call.finished');
    expect(done?.call.lostRecords).toBe(true);
  });

  it('a call whose announced payload records never come is published after the wait, marked lostRecords', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms, ioRecords: 2 })], {
      tickEachLine: false,
      end: 'none',
    });
    expect(r.tick(r.nowMs + 9_000)).toEqual([]);
    const [done] = r.tick(r.nowMs + 10_300);
    expect(done?.call.status).toBe('finished');
    expect(done?.call.lostRecords).toBe(true);
  });

  it('an exit that counts no more payload records than came publishes after the grace period as before', () => {
    const r = replay(
      [...plugin(100, 10 * ms, 11 * ms), ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, config), exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms, ioRecords: 1 })],
      { tickEachLine: false, end: 'none' },
    );
    const [done] = r.tick(r.nowMs + 250);
    expectStream(done!.call.stdin, config);
    expect(done!.call.lostRecords).toBe(false);
  });

  it("a thread's next write on another CPU, arriving amid a read's chunks, takes none of them", () => {
    const read = readLines({ ts: 12 * ms, pid: 100, file: STDIO[0], cpu: 0 }, config);
    const write = writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: STDIO[1], cpu: 1 }, result);
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      // bpftrace handed over part of CPU 0's buffer, then all of CPU 1's, then the rest of CPU 0's.
      ...read.slice(0, 2),
      ...write,
      ...read.slice(2),
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms, ioRecords: 2 }),
    ]);
    expect(r.finished).toHaveLength(1);
    const call = r.finished[0]!;
    expectStream(call.stdin, config);
    expectStream(call.stdout, result);
    expect(r.framer.strayChunks).toBe(0);
    expect(r.assembler.counters.unattributed).toBe(0);
  });

  it('a chunk missing for good leaves a truncated stream once the call is finalized', () => {
    // Through the framer and the sequencer, as the daemon reads it: the exit waits behind the write still being put together.
    const write = writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: STDIO[1] }, result);
    const p = createPipeline();
    p.push(Buffer.from([...plugin(100, 10 * ms, 11 * ms), ...write.slice(0, -1), exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms })].map((l) => `${l}\n`).join('')));
    p.quiet();
    p.tick(FAR_FUTURE_MS);
    const finished = p.events.filter((e) => e.type === 'call.finished');
    expect(finished).toHaveLength(1);
    expect(p.events.filter((e) => e.type === 'call.updated')).toEqual([]);
    const out = finished[0]!.call.stdout;
    expect(out.truncated).toBe(true);
    expect(out.totalBytes).toBe(result.length);
    expect(out.bytes.equals(result.subarray(0, out.bytes.length))).toBe(true);
    expect(out.bytes.length).toBeLessThan(result.length);
  });
});

describe('synthetic: stream routing by open file', () => {
  it('a dup of stdout kept on fd 3 is stdout, fd 1 pointed at stderr is stderr', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      ...writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: STDIO[2] }, 'log\n'),
      ...writeLines({ ts: 13 * ms, pid: 100, fd: 3, file: STDIO[1] }, '{}'),
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.stdioShared).toBe(false);
    expect(call.stdout.bytes.toString()).toBe('{}');
    expect(call.stderr.bytes.toString()).toBe('log\n');
  });

  it('stdout and stderr one file: the call says so, and the fd used picks the stream', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms, { stdio: [STDIO[0], 777, 777] }),
      ...writeLines({ ts: 12 * ms, pid: 100, fd: 2, file: 777 }, 'log\n'),
      ...writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: 777 }, '{}'),
      ...writeLines({ ts: 14 * ms, pid: 100, fd: 3, file: 777 }, '!'),
      exitLine({ ts: 15 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.stdioShared).toBe(true);
    expect(call.stdout.bytes.toString()).toBe('{}!');
    expect(call.stderr.bytes.toString()).toBe('log\n');
  });

  it('a helper’s write to a file of its own (its `>/dev/null`) is its output, not the call’s', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms, { stdio: [STDIO[0], 777, 777] }),
      forkLine(12 * ms, 100, 150),
      ...execLines({ ts: 13 * ms, pid: 150, ppid: 100, start: 12 * ms, path: '/usr/bin/cat', env: CNI_ENV, stdio: [STDIO[0], 888, 777] }),
      ...readLines({ ts: 14 * ms, pid: 150, file: STDIO[0] }, 'config'),
      ...writeLines({ ts: 15 * ms, pid: 150, fd: 1, file: 888 }, 'config'),
      exitLine({ ts: 16 * ms, pid: 150, start: 12 * ms }),
      ...writeLines({ ts: 17 * ms, pid: 100, fd: 1, file: 777 }, '{}'),
      exitLine({ ts: 18 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.stdin.bytes.toString()).toBe('config');
    expect(call.stdout.bytes.toString()).toBe('{}');
    expect(call.helpers[0]!.stdout.bytes.toString()).toBe('config');
  });

  it('bytes that went by untaken mark the stream truncated and are counted on the call', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      ...writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: STDIO[1] }, 'one '),
      `U ${13 * ms} 100 100 W 1 ${STDIO[1]} 5`,
      `U ${13.5 * ms} 100 100 W 1 9999 5`,
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.uncapturedIo).toBe(1);
    expect(call.stdout).toMatchObject({ totalBytes: 9, truncated: true });
    expect(call.stdout.bytes.toString()).toBe('one ');
  });

  it('the canary’s write is checked against the known payload (by the framer, once, whole), not filed anywhere', () => {
    const canary = (pid: number, text: string) => [
      ...execLines({ ts: pid * ms, pid, ppid: 1, start: pid * ms, path: '/bin/echo', env: { CNI_COMMAND: CANARY_COMMAND } }),
      ...writeLines({ ts: (pid + 0.5) * ms, pid, fd: 1, file: 4 }, text),
      exitLine({ ts: (pid + 0.7) * ms, pid, start: pid * ms }),
    ];
    const r = replay([helloLine('full'), ...canary(300, CANARY_OUTPUT), ...canary(301, 'something else\n')], { isOwnCanary: (pid, ppid) => ppid === 1 && (pid === 300 || pid === 301) });
    expect(r.finished).toEqual([]);
    expect(r.assembler.counters).toMatchObject({ canaries: 2, unattributed: 0 });
    expect(r.framer.canary).toEqual({ execs: 2, writesRight: 1, writesWrong: 1 });
    expect(r.framer.strayChunks).toBe(0);
  });
});

describe('synthetic: stream routing by inode', () => {
  it('a shell plugin’s own `>&2` write (fd 1, stderr inode) goes to stderr', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      ...writeLines({ ts: 12 * ms, pid: 100, fd: 1, file: STDIO[2] }, 'log line\n'),
      ...writeLines({ ts: 13 * ms, pid: 100, fd: 1, file: STDIO[1] }, '{}'),
      exitLine({ ts: 14 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.stdout.bytes.toString()).toBe('{}');
    expect(call.stderr.bytes.toString()).toBe('log line\n');
  });

  it('a plugin’s reads and writes redirected elsewhere (`< file`, `> file`) are not its stdin/stdout', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      ...readLines({ ts: 12 * ms, pid: 100, file: STDIO[0] }, 'config'),
      ...readLines({ ts: 13 * ms, pid: 100, file: 9999 }, 'some file'),
      ...writeLines({ ts: 14 * ms, pid: 100, fd: 1, file: 9998 }, 'to a log file'),
      ...writeLines({ ts: 15 * ms, pid: 100, fd: 1, file: STDIO[1] }, 'result'),
      exitLine({ ts: 16 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.stdin.bytes.toString()).toBe('config');
    expect(call.stdout.bytes.toString()).toBe('result');
  });
});

describe('synthetic: flushAll', () => {
  it('marks running calls incomplete and publishes exited ones as finished', () => {
    const r = replay(
      [
        ...plugin(100, 10 * ms, 11 * ms),
        exitLine({ ts: 12 * ms, pid: 100, start: 10 * ms }),
        ...plugin(200, 20 * ms, 21 * ms),
        ...writeLines({ ts: 22 * ms, pid: 200, fd: 1, file: STDIO[1] }, 'partial'),
      ],
      { tickEachLine: false, end: 'none' },
    );
    const events = r.flushAll('tracer stopped');
    expect(events.map((e) => [e.type, e.call.pid, e.call.status, e.call.incompleteReason])).toEqual([
      ['call.finished', 100, 'finished', null],
      ['call.finished', 200, 'incomplete', 'tracer stopped'],
    ]);
    expect(events[1]!.call.stdout.bytes.toString()).toBe('partial');
    expect(r.assembler.openCallCount).toBe(0);
    expect(r.assembler.runningCalls()).toEqual([]);
    expect(r.tick(FAR_FUTURE_MS)).toEqual([]);
  });

  it('completes an exec still waiting for its chunks', () => {
    const lines = plugin(100, 10 * ms, 11 * ms);
    const r = replay(lines.slice(0, 1), { end: 'none' });
    expect(r.started).toHaveLength(0);
    const events = r.flushAll('stop');
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.type)).toEqual(['call.started', 'call.finished']);
    expect(events[1]!.call.status).toBe('incomplete');
  });
});

describe('synthetic: threads and forks', () => {
  it('a thread exit drops the phantom fork entry the clone left', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), forkLine(12 * ms, 100, 101) /* a Go runtime thread */], { end: 'none' });
    expect(r.assembler.livePids().includes(101)).toBe(true);
    r.feed([threadExitLine(101)]);
    expect(r.assembler.livePids().includes(101)).toBe(false);
    expect(r.assembler.livePids().includes(100)).toBe(true);
    // tid 101 comes back as a process of some runtime, running loopback: a call of its own.
    r.feed([
      ...execLines({ ts: 13 * ms, pid: 101, ppid: 7, start: 13 * ms, path: '/opt/cni/bin/loopback', env: CNI_ENV }),
      exitLine({ ts: 14 * ms, pid: 101, start: 13 * ms }),
      exitLine({ ts: 15 * ms, pid: 100, start: 10 * ms }),
    ]);
    r.tick(FAR_FUTURE_MS);
    const loopback = onlyCall(r.finished, (c) => c.plugin === 'loopback', 'loopback');
    expect(loopback.parentId).toBeNull();
    expect(loopback.parentProcess).toEqual({ pid: 7, comm: null, exe: null });
    expect(onlyCall(r.finished, (c) => c.plugin === 'bridge', 'bridge').helpers).toEqual([]);
  });

  it('a thread exit of a process (not a thread) leaves it known', () => {
    const r = replay([...plugin(100, 10 * ms, 11 * ms), forkLine(12 * ms, 100, 150), ...execLines({ ts: 13 * ms, pid: 150, ppid: 100, start: 12 * ms, path: '/usr/bin/jq', env: CNI_ENV })], { end: 'none' });
    r.feed([threadExitLine(150)]);
    expect(r.assembler.livePids().includes(150)).toBe(true);
  });

  it('the Go plugins’ threads of the recorded bridge calls are all forgotten by their end', () => {
    const lines = traceLines('bridge.trace');
    const tids = lines.filter((l) => l.startsWith('T ')).map((l) => Number(l.slice(2)));
    expect(tids.length).toBeGreaterThan(10);
    const r = replay(lines, { end: 'none', tickEachLine: false });
    for (const tid of tids) expect(r.assembler.livePids().includes(tid)).toBe(false);
  });

  it('a helper exec’d by a fork of the plugin is listed, with its own output', () => {
    const r = replay([
      ...plugin(100, 10 * ms, 11 * ms),
      forkLine(12 * ms, 100, 150),
      ...execLines({ ts: 13 * ms, pid: 150, ppid: 100, start: 12 * ms, path: '/usr/sbin/iptables', argv: ['iptables', '-L'], env: CNI_ENV, stdio: [STDIO[0], 777, STDIO[2]] }),
      ...writeLines({ ts: 14 * ms, pid: 150, fd: 1, file: 777 }, 'Chain INPUT\n'),
      ...writeLines({ ts: 14.5 * ms, pid: 150, fd: 2, file: STDIO[2] }, 'warning\n'),
      exitLine({ ts: 15 * ms, pid: 150, start: 12 * ms, code: 3 }),
      exitLine({ ts: 16 * ms, pid: 100, start: 10 * ms }),
    ]);
    const call = r.finished[0]!;
    expect(call.helpers).toHaveLength(1);
    const h = call.helpers[0]!;
    expect(h).toMatchObject({ pid: 150, ppid: 100, path: '/usr/sbin/iptables', argv: ['iptables', '-L'], outcome: { exitCode: 3, signal: null, coreDumped: false } });
    expect(h.stdout.bytes.toString()).toBe('Chain INPUT\n');
    // Its stderr is the plugin's stderr: it belongs to the call.
    expect(call.stderr.bytes.toString()).toBe('warning\n');
    expectEmpty(h.stderr);
  });

  it('the collector canary is counted, never published', () => {
    const r = replay([
      ...execLines({ ts: 1 * ms, pid: 300, ppid: 1, start: 1 * ms, path: '/bin/true', env: { CNI_COMMAND: '__cnirec_canary__' } }),
      exitLine({ ts: 2 * ms, pid: 300, start: 1 * ms }),
    ]);
    expect(r.events).toEqual([]);
    expect(r.assembler.counters.canaries).toBe(1);
  });

  it('the collector canary seen without its environment (bpftrace still attaching its probes) is no call, and proves nothing', () => {
    // Only the header: the probe that prints the argv/env block was not attached yet.
    const header = execLines({ ts: 1 * ms, pid: 300, ppid: 42, start: 1 * ms, path: '/usr/bin/true', env: { CNI_COMMAND: '__cnirec_canary__' } })[0]!;
    const lines = [header, exitLine({ ts: 2 * ms, pid: 300, start: 1 * ms })];
    const r = replay(lines, { isOwnCanary: (pid, ppid) => pid === 300 && ppid === 42 });
    expect(r.events).toEqual([]);
    expect(r.assembler.counters.canaries).toBe(0);
    // Not known as the canary, the same header is a call of `true` with no command.
    expect(replay(lines).finished.map((c) => [c.plugin, c.command])).toEqual([['true', null]]);
  });
});

describe('synthetic: Multus thick mode (a shim asks a daemon to run the delegates)', () => {
  const shim = (pid: number, ts: number, env: Record<string, string> = {}) =>
    execLines({ ts, pid, ppid: 1, start: ts, path: '/opt/cni/bin/multus-shim', env: { ...CNI_ENV, ...env }, stdio: STDIO });
  // multus-daemon (pid 900) is a long-running process, no call: its children's parent process is no call.
  const delegate = (pid: number, ts: number, path: string, env: Record<string, string> = {}) =>
    execLines({ ts, pid, ppid: 900, start: ts, path, env: { ...CNI_ENV, ...env }, stdio: [601, 602, 603] });

  it('links the delegates the daemon runs for the same sandbox to the shim call, by container id and time', () => {
    const r = replay([
      helloLine('full'),
      ...shim(100, 10 * ms),
      ...delegate(200, 11 * ms, '/opt/cni/bin/flannel'),
      // flannel delegates to bridge itself: an ordinary process-tree link.
      ...execLines({ ts: 12 * ms, pid: 201, ppid: 200, start: 12 * ms, path: '/opt/cni/bin/bridge', env: CNI_ENV, stdio: [601, 602, 603] }),
      exitLine({ ts: 13 * ms, pid: 201, start: 12 * ms }),
      exitLine({ ts: 14 * ms, pid: 200, start: 11 * ms }),
      // An additional network of the same pod, net1.
      ...delegate(202, 15 * ms, '/opt/cni/bin/macvlan', { CNI_IFNAME: 'net1' }),
      exitLine({ ts: 16 * ms, pid: 202, start: 15 * ms }),
      exitLine({ ts: 17 * ms, pid: 100, start: 10 * ms }),
      // After the shim exited, and for another sandbox while it ran: not its delegates.
      ...delegate(203, 18 * ms, '/opt/cni/bin/flannel'),
      exitLine({ ts: 19 * ms, pid: 203, start: 18 * ms }),
    ]);
    const by = (plugin: string) => r.finished.filter((c) => c.plugin === plugin);
    const shimCall = onlyCall(r.finished, (c) => c.plugin === 'multus-shim', 'shim');
    const [flannel, late] = by('flannel');
    expect(flannel!.parentId).toBe(shimCall.id);
    // Still says which process ran it.
    expect(flannel!.parentProcess).toMatchObject({ pid: 900 });
    expect(onlyCall(r.finished, (c) => c.plugin === 'bridge', 'bridge').parentId).toBe(flannel!.id);
    expect(onlyCall(r.finished, (c) => c.plugin === 'macvlan', 'macvlan').parentId).toBe(shimCall.id);
    expect(late!.parentId).toBeNull();
  });

  it('links nothing across sandboxes, and never two calls of an ordinary runtime', () => {
    const r = replay([
      helloLine('full'),
      ...shim(100, 10 * ms),
      ...delegate(200, 11 * ms, '/opt/cni/bin/flannel', { CNI_CONTAINERID: 'other' }),
      // containerd setting up two networks of one pod side by side: two top-level calls.
      ...plugin(300, 11 * ms, 11 * ms),
      ...execLines({ ts: 12 * ms, pid: 301, ppid: 1, start: 12 * ms, path: '/opt/cni/bin/macvlan', env: CNI_ENV, stdio: STDIO }),
      ...[200, 300, 301, 100].map((pid, i) => exitLine({ ts: (20 + i) * ms, pid, start: pid === 100 ? 10 * ms : pid === 301 ? 12 * ms : 11 * ms })),
    ]);
    expect(r.finished).toHaveLength(4);
    expect(r.finished.every((c) => c.parentId === null)).toBe(true);
  });
});

describe('stdio shapes at syscall exit (bytes.trace)', () => {
  const r = replayFixture('bytes.trace');
  // In recording order: shared (two files), dup-stdout, writev, shared again into one file.
  const calls = [...r.finished].sort((a, b) => a.startedAtUs - b.startedAtUs);
  const stdin = payload('bytes.stdin');
  const result = '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[]}\n';

  it('finishes the four calls, each with the stdin it was given', () => {
    expect(calls).toHaveLength(4);
    for (const c of calls) {
      expect(c.outcome).toEqual(OK);
      expectStream(c.stdin, stdin);
    }
  });

  it('stdout and stderr to two files: not shared, each its own', () => {
    const c = calls[0]!;
    expect(c.stdioShared).toBe(false);
    expect(c.stdout.bytes.toString()).toBe(result);
    expect(c.stderr.bytes.toString()).toBe('log: starting\nlog: done\n');
  });

  it('a dup of stdout written after fd 1 went to stderr is stdout', () => {
    const c = calls[1]!;
    expectStream(c.stdout, payload('bytes-dup.stdout'));
    expectStream(c.stderr, payload('bytes-dup.stderr'));
  });

  it('writev: two iovecs taken whole; of four, two taken and the rest counted', () => {
    const c = calls[2]!;
    expect(c.stdout.bytes.toString()).toBe('{"cniVersion":"1.0.0","ips":[]}\n');
    expect(c.stderr).toMatchObject({ totalBytes: 'one two three four\n'.length, truncated: true });
    expect(c.stderr.bytes.toString()).toBe('one two ');
    expect(c.uncapturedIo).toBe(1);
  });

  it('`>file 2>&1`: one file, split by the fd each write went through', () => {
    const c = calls[3]!;
    // Told apart write by write: nothing is left mixed, so no caveat.
    expect(c.stdioShared).toBe(false);
    expect(c.stdout.bytes.toString()).toBe(result);
    expect(c.stderr.bytes.toString()).toBe('log: starting\nlog: done\n');
    expect(Buffer.concat([Buffer.from('log: starting\n'), c.stdout.bytes, Buffer.from('log: done\n')]).equals(payload('bytes-shared.combined'))).toBe(true);
  });
});
