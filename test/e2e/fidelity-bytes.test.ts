/**
 * Full mode records the bytes the caller really got, whatever way the plugin
 * writes them: stdout and stderr on one file (a pipe, a terminal, /dev/null),
 * a non-blocking stdout with partial writes, a write that fails, a buffer at
 * the edge of a mapping, writev, a dup of stdout kept on fd 3, eight threads;
 * and says which bytes went by untaken (the kernel copying stdin to stdout).
 * Real bpftrace, real processes: test/e2e/fixtures/bytes/driver.py runs
 * plugin.py with the stdio a case needs and prints what it received.
 */

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../../store/index.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures/bytes');
const PLUGIN = path.join(FIXTURES, 'plugin.py');
const CAT_PLUGIN = path.join(FIXTURES, 'cat-stdin.sh');
const WARN_PLUGIN = path.join(FIXTURES, 'warn-stderr.sh');
const DRIVER = path.join(FIXTURES, 'driver.py');
const SCRIPT = '/usr/bin/script';
const CONFIG = Buffer.from('{"cniVersion":"1.0.0","name":"bytes","type":"plugin.py"}\n');

const canRun = requirePrivilegedSuite();

interface Received {
  exit: number;
  pid: number;
  stdout?: Buffer;
  stderr?: Buffer;
  combined?: Buffer;
}

/** Runs the plugin through the driver: what the caller received. */
function drive(how: string, bytesCase: string, containerId: string, stdin: Buffer = CONFIG, plugin = PLUGIN): Received {
  const out = execFileSync('/usr/bin/python3', [DRIVER, how, plugin, bytesCase, containerId], { input: stdin, timeout: 60_000 });
  const raw = JSON.parse(out.toString()) as Record<string, string | number>;
  const got: Received = { exit: raw.exit as number, pid: raw.pid as number };
  for (const k of ['stdout', 'stderr', 'combined'] as const) {
    if (typeof raw[k] === 'string') got[k] = Buffer.from(raw[k], 'base64');
  }
  return got;
}

describe.runIf(canRun)('full mode keeps the bytes the caller received', () => {
  let daemon: RunningDaemon;
  let seq = 0;

  beforeAll(async () => {
    daemon = await startDaemon({ capture: 'full' });
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  const containerFor = (name: string) => `bytes-${name}-${Date.now().toString(16)}-${seq++}`;

  async function recordOf(containerId: string): Promise<StoredCall> {
    const [call] = await daemon.waitFor(`the call of ${containerId}`, () => {
      const calls = daemon.callsFor(containerId).filter((c) => c.status !== 'running');
      return calls.length > 0 ? calls : null;
    });
    return call!;
  }

  it('reports the payload path it uses, checked at start-up', async () => {
    const health = (await (await fetch(`${daemon.url}/healthz`)).json()) as { tracer: { payloadPath: string | null } };
    expect(health.tracer.payloadPath).toBe('syscall-exit');
    expect(daemon.logs()).toContain('full mode takes payloads at syscall exit');
  });

  it('splits stdout and stderr sharing one pipe (2>&1) by the fd each write went through', async () => {
    const containerId = containerFor('shared');
    const got = drive('shared', 'shared', containerId);
    expect(got.exit).toBe(0);
    const call = await recordOf(containerId);
    // Every write told apart by its fd: nothing left mixed, no caveat.
    expect(call.stdioShared).toBe(false);
    expect(call.stdin.bytes.equals(CONFIG)).toBe(true);
    expect(call.stderr.bytes.toString()).toBe('log: starting\nlog: done\n');
    expect(JSON.parse(call.stdout.bytes.toString())).toMatchObject({ cniVersion: '1.0.0' });
    // Nothing the caller got is missing, and nothing was added.
    expect(call.stdout.bytes.length + call.stderr.bytes.length).toBe(got.combined!.length);
    expect(Buffer.concat([Buffer.from('log: starting\n'), call.stdout.bytes, Buffer.from('log: done\n')]).equals(got.combined!)).toBe(true);
  });

  it("files a shell's `echo … >&2` (dup2(2, 1), then a write to fd 1) as stderr when stdout and stderr are one pipe", async () => {
    const containerId = containerFor('shell-warn');
    const got = drive('shared', 'plain', containerId, CONFIG, WARN_PLUGIN);
    expect(got.exit).toBe(0);
    expect(got.combined!.toString()).toBe('warn-on-stderr\n{"cniVersion":"1.0.0"}\n');
    const call = await recordOf(containerId);
    expect(call.stdin.bytes.equals(CONFIG)).toBe(true);
    expect(call.stderr.bytes.toString()).toBe('warn-on-stderr\n');
    expect(call.stdout.bytes.toString()).toBe('{"cniVersion":"1.0.0"}\n');
    expect(call.stdioShared).toBe(false);
  });

  it('says stdout and stderr are mixed only for a write through an fd that stands for neither (a copy made before the exec)', async () => {
    const containerId = containerFor('shell-fd3');
    const got = drive('shared-fd3', 'fd3', containerId, CONFIG, WARN_PLUGIN);
    expect(got.exit).toBe(0);
    expect(got.combined!.toString()).toBe('warn-on-stderr\nvia-fd3\n{"cniVersion":"1.0.0"}\n');
    const call = await recordOf(containerId);
    expect(call.stderr.bytes.toString()).toBe('warn-on-stderr\n');
    expect(call.stdout.bytes.toString()).toBe('via-fd3\n{"cniVersion":"1.0.0"}\n');
    expect(call.stdioShared).toBe(true);
  });

  it('splits a hand-run in a terminal (script(1): fds 0, 1, 2 one pty) the same way', async () => {
    expect(existsSync(SCRIPT), `${SCRIPT} (util-linux) runs the plugin on a terminal`).toBe(true);
    const containerId = containerFor('pty');
    // Only the plugin gets the CNI variables: script and its shell are the person at the terminal.
    const cmd = `env -i PATH=/usr/bin:/bin CNI_COMMAND=ADD CNI_CONTAINERID=${containerId} CNI_NETNS=/var/run/netns/none CNI_IFNAME=eth0 CNI_PATH=${FIXTURES} BYTES_CASE=shared ${PLUGIN}`;
    // The config typed as a line, then Ctrl-D: end of file on the terminal.
    const terminal = execFileSync(SCRIPT, ['-qc', cmd, '/dev/null'], { input: Buffer.concat([CONFIG, Buffer.from('\x04')]), timeout: 60_000, env: { PATH: '/usr/bin:/bin' } });
    const call = await recordOf(containerId);
    expect(call.exitCode).toBe(0);
    // Every write told apart by its fd: nothing left mixed, no caveat.
    expect(call.stdioShared).toBe(false);
    expect(call.stdin.bytes.equals(CONFIG)).toBe(true);
    expect(call.stderr.bytes.toString()).toBe('log: starting\nlog: done\n');
    expect(JSON.parse(call.stdout.bytes.toString())).toMatchObject({ cniVersion: '1.0.0' });
    // What the terminal showed after its echo of the input: the plugin's writes, newlines as CR LF.
    const shown = Buffer.concat([Buffer.from('log: starting\n'), call.stdout.bytes, Buffer.from('log: done\n')]).toString().replaceAll('\n', '\r\n');
    expect(terminal.toString().endsWith(shown)).toBe(true);
  });

  it('does not take a helper’s `cat >/dev/null` of stdin for the stdout of a call whose stdout and stderr are /dev/null', async () => {
    const containerId = containerFor('devnull');
    const got = drive('devnull', 'devnull', containerId);
    expect(got.exit).toBe(0);
    const call = await recordOf(containerId);
    // Every write told apart by its fd: nothing left mixed, no caveat.
    expect(call.stdioShared).toBe(false);
    expect(call.stdin.bytes.equals(CONFIG)).toBe(true);
    expect(JSON.parse(call.stdout.bytes.toString())).toMatchObject({ cniVersion: '1.0.0' });
    expect(call.stderr.bytes.toString()).toBe('log: done\n');
    const cat = call.helpers.find((h) => h.path.endsWith('/cat'));
    expect(cat, 'the cat helper').toBeDefined();
    expect(cat!.stdout.bytes.equals(CONFIG)).toBe(true);
  });

  it('stores what a non-blocking stdout delivered, not what the EAGAIN retries attempted', async () => {
    const containerId = containerFor('nonblock');
    const got = drive('slow-reader', 'nonblock', containerId);
    expect(got.exit).toBe(0);
    expect(got.stdout!.length).toBe(180_000);
    const call = await recordOf(containerId);
    expect(Number(/retries (\d+)/.exec(got.stderr!.toString())?.[1]), 'the plugin met EAGAIN').toBeGreaterThan(0);
    expect(call.stdout.totalBytes).toBe(180_000);
    expect(call.stdout.truncated).toBe(false);
    expect(call.stdout.bytes.equals(got.stdout!)).toBe(true);
    expect(call.stderr.bytes.equals(got.stderr!)).toBe(true);
  });

  it('does not store a write that failed with EPIPE as the result', async () => {
    const containerId = containerFor('epipe');
    const got = drive('closed-stdout', 'epipe', containerId);
    expect(got.exit).toBe(3);
    expect(got.stderr!.toString()).toBe('stdout is gone\n');
    const call = await recordOf(containerId);
    expect(call.exitCode).toBe(3);
    expect(call.stdout.bytes.length).toBe(0);
    expect(call.stdout.totalBytes).toBe(0);
    expect(call.stderr.bytes.equals(got.stderr!)).toBe(true);
  });

  it('reads a 57-byte write whose buffer ends at an unmapped page as its 57 real bytes', async () => {
    const containerId = containerFor('edge');
    const got = drive('pipes', 'page-edge', containerId);
    expect(got.exit, got.stderr!.toString()).toBe(0);
    expect(got.stdout!.length).toBe(57);
    const call = await recordOf(containerId);
    expect(call.stdout.bytes.equals(got.stdout!)).toBe(true);
    expect(call.stdout.truncated).toBe(false);
  });

  it('takes writev’s first two iovecs and says when more went by untaken', async () => {
    const containerId = containerFor('writev');
    const got = drive('pipes', 'writev', containerId);
    expect(got.exit).toBe(0);
    const call = await recordOf(containerId);
    // Two iovecs: taken whole.
    expect(call.stdout.bytes.equals(got.stdout!)).toBe(true);
    expect(call.stdout.truncated).toBe(false);
    // Four: the first two taken, the rest counted and the call marked.
    expect(got.stderr!.toString()).toBe('one two three four\n');
    expect(call.stderr.bytes.toString()).toBe('one two ');
    expect(call.stderr.totalBytes).toBe(got.stderr!.length);
    expect(call.stderr.truncated).toBe(true);
    expect(call.uncapturedIo).toBe(1);
  });

  // A config padded past one pipe buffer's worth of small writes, as a file on stdin.
  const BIG_CONFIG = Buffer.from(`{"cniVersion":"1.0.0","name":"bytes","type":"plugin.py","pad":"${'x'.repeat(20_000)}"}\n`);

  it('counts a helper’s copy_file_range of the call’s stdin file to its stdout file as a read and a write not taken', async () => {
    const containerId = containerFor('copy-file-range');
    const got = drive('files', 'copy-file-range', containerId, BIG_CONFIG, CAT_PLUGIN);
    expect(got.exit, got.stderr!.toString()).toBe(0);
    expect(got.stdout!.equals(BIG_CONFIG)).toBe(true);
    const call = await recordOf(containerId);
    expect(call.helpers.some((h) => h.path.endsWith('/cat')), 'the cat helper').toBe(true);
    // GNU cat asks for everything at once: one copy_file_range, seen from both sides (its second returns 0).
    expect(call.uncapturedIo).toBe(2);
    expect(call.stdin.totalBytes).toBe(BIG_CONFIG.length);
    expect(call.stdin.bytes.length).toBe(0);
    expect(call.stdin.truncated).toBe(true);
    expect(call.stdout.totalBytes).toBe(BIG_CONFIG.length);
    expect(call.stdout.bytes.length).toBe(0);
    expect(call.stdout.truncated).toBe(true);
    expect(call.stderr.bytes.toString()).toBe('log: copied\n');
  });

  it('counts sendfile and splice from the call’s stdin file to its stdout pipe on both sides', async () => {
    const containerId = containerFor('sendfile-splice');
    const got = drive('file-stdin', 'sendfile-splice', containerId, BIG_CONFIG);
    expect(got.exit, got.stderr!.toString()).toBe(0);
    expect(got.stdout!.equals(BIG_CONFIG)).toBe(true);
    const calls = Number(/^calls (\d+)\n$/.exec(got.stderr!.toString())?.[1]);
    expect(calls, 'a sendfile and at least one splice').toBeGreaterThanOrEqual(2);
    const call = await recordOf(containerId);
    expect(call.uncapturedIo).toBe(2 * calls);
    expect(call.stdin.totalBytes).toBe(BIG_CONFIG.length);
    expect(call.stdin.truncated).toBe(true);
    expect(call.stdout.totalBytes).toBe(BIG_CONFIG.length);
    expect(call.stdout.truncated).toBe(true);
    expect(call.stderr.bytes.equals(got.stderr!)).toBe(true);
  });

  it('follows stdout kept on fd 3 after fd 1 was pointed at stderr', async () => {
    const containerId = containerFor('dup');
    const got = drive('pipes', 'dup-stdout', containerId);
    expect(got.exit).toBe(0);
    const call = await recordOf(containerId);
    expect(call.stdioShared).toBe(false);
    expect(call.stdout.bytes.equals(got.stdout!)).toBe(true);
    expect(call.stderr.bytes.equals(got.stderr!)).toBe(true);
    expect(call.stderr.bytes.toString()).toBe('log: via fd 1, now stderr\n');
  });

  it('keeps eight threads’ lines whole, each thread’s in its order, and near where the pipe delivered them', async () => {
    const containerId = containerFor('threads');
    const got = drive('pipes', 'threads', containerId);
    expect(got.exit).toBe(0);
    expect(got.stdout!.length).toBe(8 * 150 * 41);
    const call = await recordOf(containerId);
    expect(call.stdout.bytes.length).toBe(got.stdout!.length);
    // Bytes are ordered by when each write returned. Two writes of two CPUs that return within microseconds
    // can pass the pipe in one order and their probes in the other (a probe may be preempted before it takes
    // its timestamp), so what is knowable is: every line once and whole, each thread's lines in its order,
    // and lines near where the pipe put them (a preempted probe can carry one line further: a bound on all is
    // a bound on the scheduler).
    const recorded = call.stdout.bytes.toString().split('\n').slice(0, -1);
    const received = got.stdout!.toString().split('\n').slice(0, -1);
    expect([...recorded].sort()).toEqual([...received].sort());
    for (let n = 0; n < 8; n++) {
      const own = recorded.filter((l) => l.startsWith(`thread ${n} `));
      expect(own).toEqual(received.filter((l) => l.startsWith(`thread ${n} `)));
    }
    const at = new Map(received.map((l, i) => [l, i]));
    const displaced = recorded.map((l, i) => Math.abs(at.get(l)! - i));
    expect(displaced.filter((d) => d <= 8).length / displaced.length).toBeGreaterThanOrEqual(0.95);
  });
});
