/**
 * The CLI against the real daemon recording a hostile plugin with real
 * bpftrace: its stderr and CNI error are escape sequences (retitle, clear
 * the screen, a fake red error, a right-to-left override) and its pod's
 * name clears the screen. Read on a terminal (under `script`) and through
 * a pipe, nothing it wrote drives the terminal: only the CLI's own colours
 * are escape sequences; `--raw` and `--json` still give the exact bytes.
 */

import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cnirec, escapeSequences } from '../integration/cli-harness.js';
import { startDaemon, type RunningDaemon } from './support/daemon.js';
import { execPlugin, podCniArgs } from './support/plugin-driver.js';
import { requirePrivilegedSuite } from './support/privileged.js';

const canRun = requirePrivilegedSuite();
const HOSTILE = path.resolve(import.meta.dirname, 'fixtures/plugins/hostile.sh');
const EXEC_WRAPPER = path.resolve(import.meta.dirname, 'fixtures/plugins/exec-wrapper.sh');
const BG_CHILD = path.resolve(import.meta.dirname, 'fixtures/plugins/bg-child.sh');
const STDERR = '\u001b]0;pwned-title\u0007\u001b[2J\u001b[31mERROR-looking\u001b[0m\n';
const ns = `cli-e2e-${Date.now().toString(36)}`;
const POD = 'web\u001b[2J';
const TTY = { tty: true, env: { TERM: 'xterm-256color' } } as const;
/** Without the CLI's own colours (a test of them is above): the text a person reads. */
// eslint-disable-next-line no-control-regex -- removing escapes is the point
const read = (s: string) => s.replace(/\u001b\[(?:0|1|2|31|32|33)m/g, '');

describe.runIf(canRun)('the CLI reading what a hostile plugin wrote, recorded by the real daemon', () => {
  let daemon: RunningDaemon;
  let id: string;
  const run = (args: string[], opts: Parameters<typeof cnirec>[1] = {}) => cnirec(args, { api: daemon.url, ...opts });

  beforeAll(async () => {
    daemon = await startDaemon();
    const containerId = `${ns}-ctr`;
    for (let i = 0; i < 3; i++) {
      const r = await execPlugin({ plugin: HOSTILE, cniPath: path.dirname(HOSTILE), command: 'DEL', containerId, netns: '/var/run/netns/none', ifname: 'eth0', cniArgs: podCniArgs(ns, POD, 'uid-1', containerId), stdin: '{"cniVersion":"1.0.0","name":"h","type":"hostile"}' });
      expect(r.exitCode).toBe(1);
    }
    const calls = await daemon.waitFor('the hostile calls stored', (store) => {
      const page = store.listCalls({ namespace: ns, status: 'finished' }, 10);
      return page.items.length >= 3 ? page.items : null;
    });
    id = calls[0]!.id;
  }, 120_000);
  afterAll(async () => {
    await daemon?.stop();
  });

  it('stored the bytes as the plugin wrote them, and --raw and --json give them back exactly', async () => {
    expect((await run(['show', id, '--raw', 'stderr'])).stdout).toBe(STDERR);
    const json = JSON.parse((await run(['show', id, '-o', 'json'])).stdout) as { pod: { name: string }; stderr: { text: string } };
    expect(json.pod.name).toBe(POD);
    expect(json.stderr.text).toBe(STDERR);
  });

  it.each([
    ['calls', () => ['calls', '--namespace', ns]],
    ['calls -o wide', () => ['calls', '--namespace', ns, '-o', 'wide']],
    ['show', () => ['show', id]],
    ['pod', () => ['pod', `${ns}/${POD}`]],
  ])('%s on a terminal: only the CLI’s own colours; what the plugin wrote shown as text', async (_name, args) => {
    const r = await run(args(), TTY);
    expect(r.code, r.stdout).toBe(0);
    expect(escapeSequences(r.stdout).foreign).toEqual([]);
    expect(r.stdout).toContain('web\\x1b[2J');
  });

  it('show says the error, the stderr and the override visibly, in a pipe as on a terminal', async () => {
    for (const opts of [TTY, {}]) {
      const r = await run(['show', id], opts);
      expect(read(r.stdout)).toContain('error  boom \\x1b[2J\\u202eevil');
      expect(read(r.stdout)).toContain('\\x1b]0;pwned-title\\x07\\x1b[2J\\x1b[31mERROR-looking\\x1b[0m');
      expect(escapeSequences(r.stdout).foreign).toEqual([]);
    }
  });

  it('tail replays them, neutralised, and marks where live calls begin', async () => {
    const r = await run(['tail', '--namespace', ns, '--since', '10m'], { ...TTY, stopAfterMs: 3000 });
    expect(r.stdout).toContain('live from here');
    expect(read(r.stdout)).toContain('error: boom \\x1b[2J\\u202eevil');
    expect(escapeSequences(r.stdout).foreign).toEqual([]);
  });

  it('the loop it makes is the first finding, critical, with its pod and count', async () => {
    // The daemon looks for loops every 5 s.
    let first = '';
    for (let i = 0; i < 40 && !first.includes('del-loop'); i++) {
      first = (await run(['findings', '--json', '--kind', 'del-loop'])).stdout.split('\n')[0] ?? '';
      if (!first.includes('del-loop')) await new Promise((r) => setTimeout(r, 500));
    }
    expect(JSON.parse(first)).toMatchObject({ kind: 'del-loop', severity: 'critical', pod: { namespace: ns, name: POD }, count: 3 });
    const r = await run(['findings', '--all'], TTY);
    expect(escapeSequences(r.stdout).foreign).toEqual([]);
    expect(read(r.stdout)).toMatch(/CRITICAL {2}del-loop {2}cli-e2e-\w+\/web\\x1b\[2J {2}3×/);
  });

  it('show lists what the record of a wrapped plugin with a lingering child may mislead about, and marks the late output', async () => {
    const containerId = `${ns}-caveats`;
    // The wrapper execs bg-child.sh in place, whose background child writes to stderr 3 s after it exited.
    const res = await execPlugin({ plugin: EXEC_WRAPPER, cniPath: path.dirname(BG_CHILD), command: 'ADD', containerId, netns: '/var/run/netns/none', ifname: 'eth0', stdin: '{"cniVersion":"1.0.0","name":"bg"}', extraEnv: { WRAP_TARGET: BG_CHILD }, drainTimeoutMs: 15_000 });
    expect(res.exitCode).toBe(0);
    const late = res.stderr.indexOf('late\n');
    expect(late, res.stderr.toString()).toBeGreaterThan(0);
    const call = await daemon.waitFor('the call with its late output', () => {
      const [c] = daemon.callsFor(containerId);
      return c && c.stderr.bytes.equals(res.stderr) && c.helpers.every((h) => h.endedAtUs !== null) ? c : null;
    });
    const lines = read((await run(['show', call.id])).stdout).split('\n');
    const at = lines.indexOf('Record caveats:');
    expect(at, lines.join('\n')).toBeGreaterThan(0);
    expect(lines.slice(at + 1, lines.indexOf('', at))).toEqual([
      `  ! output after exit: descendants wrote stderr from byte ${late} after the plugin exited (the caller still got it; marked in the stream)`,
      `  ! exec'd in place: ${EXEC_WRAPPER} → ${BG_CHILD}`,
    ]);
    const stderrAt = lines.findIndex((l) => l.startsWith('stderr  '));
    expect(lines.slice(stderrAt + 1, stderrAt + 4)).toEqual([res.stderr.subarray(0, late).toString().trimEnd(), `── written after the plugin exited, from byte ${late} ──`, 'late']);
  }, 60_000);

  it('demo runs real plugins, shows what was recorded, and its closing hint keeps the --api it was given', async () => {
    const r = await cnirec(['demo', '--api', daemon.url], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/cnirec recorded \d+ calls for this pod/);
    expect(r.stdout).toMatch(new RegExp(`see them again: cnirec pod cnirec-demo/web-[0-9a-f]+ --api ${daemon.url.replaceAll('.', '\\.')},`));
    expect(escapeSequences(r.stdout).foreign).toEqual([]);
  }, 90_000);
});
