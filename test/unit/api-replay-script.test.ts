// The replay script, run for real: a fake plugin dumps the environment,
// argv and stdin it was given, and they must equal the recorded call byte
// for byte, whatever bytes and quotes the call held.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPLAY_PATH, replayScript, type ReplaySource } from '../../api/present/replay-script.js';

let dir: string;
let out: string;
let pluginPath: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cnirec-replay-'));
  out = path.join(dir, 'out');
  fs.mkdirSync(out);
  // A directory name sh would split, expand or choke on if the path were not quoted.
  const pluginDir = path.join(dir, `it's a "plugin" dir $HOME`);
  fs.mkdirSync(pluginDir);
  pluginPath = path.join(pluginDir, 'fake bridge');
  // /proc/$$/environ is the environment the plugin was exec'd with, before the shell adds anything.
  fs.writeFileSync(
    pluginPath,
    ['#!/bin/sh', `cat /proc/$$/environ > ${out}/env`, `printf '%s\\0' "$@" > ${out}/argv`, `cat > ${out}/stdin`, 'exit 7', ''].join('\n'),
    { mode: 0o755 },
  );
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const T0 = 1_763_750_000_000_000;

function recordedCall(overrides: Partial<ReplaySource> = {}): ReplaySource {
  const stdin = Buffer.from('{"cniVersion":"1.0.0","name":"podnet","type":"bridge"}');
  return {
    id: '0hd73kbbojk-n5d',
    command: 'ADD',
    plugin: 'bridge',
    path: pluginPath,
    argv: [pluginPath],
    env: { CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'sandbox-1', CNI_NETNS: '/var/run/netns/cni-1', CNI_IFNAME: 'eth0', CNI_PATH: '/opt/cni/bin', TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    stdin: { bytes: stdin, totalBytes: stdin.length, truncated: false },
    podNamespace: 'demo',
    podName: 'web-0',
    podUid: 'uid-web-0',
    containerId: 'sandbox-1',
    netns: '/var/run/netns/cni-1',
    ifname: 'eth0',
    parentId: null,
    startedAtUs: T0,
    durationUs: 42_000,
    exitCode: 0,
    signal: null,
    status: 'finished',
    incompleteReason: null,
    captureMode: 'full',
    ...overrides,
  };
}

interface Run {
  readonly status: number | null;
  readonly stderr: string;
  readonly env: Map<string, string>;
  readonly envNames: string[];
  readonly argv: string[];
  readonly stdin: Buffer;
}

/** Writes the script, runs it with `shell` from an unrelated cwd and environment, and reads what the fake plugin saw. */
function runScript(script: string, shell: string): Run {
  const scriptPath = path.join(dir, 'replay.sh');
  fs.writeFileSync(scriptPath, script);
  const res = spawnSync(shell, [scriptPath], { cwd: dir, env: { HOME: '/nonexistent', PATH: process.env.PATH, LEAK: 'must not reach the plugin' }, encoding: 'utf8' });
  const entries = fs.readFileSync(path.join(out, 'env')).toString('utf8').split('\0').slice(0, -1);
  const env = new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  return {
    status: res.status,
    stderr: res.stderr,
    env,
    envNames: entries.map((e) => e.slice(0, e.indexOf('='))),
    argv: fs.readFileSync(path.join(out, 'argv')).toString('utf8').split('\0').slice(0, -1),
    stdin: fs.readFileSync(path.join(out, 'stdin')),
  };
}

const SHELLS = ['bash', 'sh'];

describe('the replay script, run by a shell against a fake plugin', () => {
  it.each(SHELLS)('gives the plugin exactly the recorded CNI_* variables plus PATH, and nothing else (%s)', (shell) => {
    const run = runScript(replayScript(recordedCall()), shell);
    expect(run.stderr).toBe('');
    expect(run.envNames.sort()).toEqual(['CNI_COMMAND', 'CNI_CONTAINERID', 'CNI_IFNAME', 'CNI_NETNS', 'CNI_PATH', 'PATH']);
    expect(run.env.get('PATH')).toBe(REPLAY_PATH);
    expect(run.env.get('CNI_NETNS')).toBe('/var/run/netns/cni-1');
  });

  it.each(SHELLS)('passes every byte of a binary stdin through unchanged: NUL, CR, LF, quotes and invalid UTF-8 (%s)', (shell) => {
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const bytes = Buffer.concat([everyByte, Buffer.from("'\"$`\\\nEOF\nCNIREC_STDIN\n"), randomBytes(10_000), everyByte.reverse()]);
    const run = runScript(replayScript(recordedCall({ stdin: { bytes, totalBytes: bytes.length, truncated: false } })), shell);
    expect(run.stdin.length).toBe(bytes.length);
    expect(run.stdin.equals(bytes)).toBe(true);
  });

  it.each(SHELLS)('passes an empty stdin as empty (%s)', (shell) => {
    const run = runScript(replayScript(recordedCall({ stdin: { bytes: Buffer.alloc(0), totalBytes: 0, truncated: false } })), shell);
    expect(run.stdin.length).toBe(0);
  });

  const trickyValues: Record<string, string> = {
    CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=demo;K8S_POD_NAME=it's "web" 0`,
    CNI_QUOTES: `single ' double " back \` slash \\ end\\`,
    CNI_DOLLARS: '$HOME ${PATH} $(touch pwned) `touch pwned` $1 $$',
    CNI_NEWLINES: 'first line\nsecond line\n\nafter a blank line\n',
    CNI_SPACES: '  leading, inner   and trailing  ',
    CNI_GLOB: '* ? [a-z] ~ ~root',
    CNI_EMPTY: '',
    CNI_UNICODE: 'ünïcödé ✓ 🚀',
    CNI_DASH: '-n -e --help',
    CNI_EQUALS: 'a=b=c',
    CNI_HEREDOC: "CNIREC_STDIN\nEOF\n'CNIREC_STDIN'",
  };

  it.each(SHELLS)('keeps env values with quotes, spaces, $, backticks and newlines byte for byte, and runs none of them (%s)', (shell) => {
    const run = runScript(replayScript(recordedCall({ env: { CNI_COMMAND: 'ADD', ...trickyValues } })), shell);
    expect(run.stderr).toBe('');
    for (const [name, value] of Object.entries(trickyValues)) expect(run.env.get(name), name).toBe(value);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it.each(SHELLS)('passes the recorded arguments after argv[0] unchanged (%s)', (shell) => {
    const args = ['--flag', "it's", 'two words', '$HOME', 'line\nbreak', ''];
    const run = runScript(replayScript(recordedCall({ argv: [pluginPath, ...args] })), shell);
    expect(run.argv).toEqual(args);
  });

  it.each(SHELLS)("ends with the plugin's exit status (%s)", (shell) => {
    expect(runScript(replayScript(recordedCall()), shell).status).toBe(7);
  });

  it('cannot be made to run a command by a pod name, id or path holding a newline', () => {
    const hostile = 'web\ntouch pwned\n#';
    const script = replayScript(recordedCall({ id: `x\ntouch pwned`, podName: hostile, containerId: hostile, netns: hostile }));
    const header = script.split('\ncnirec_stdin() {')[0]!;
    for (const line of header.split('\n')) expect(line === '' || line.startsWith('#'), JSON.stringify(line)).toBe(true);
    runScript(script, 'bash');
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });
});

describe('the replay script header', () => {
  it('says what the call was: command, plugin, pod, container, when and how it ended', () => {
    const script = replayScript(recordedCall());
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).toContain('# cnirec replay of CNI call 0hd73kbbojk-n5d');
    expect(script).toMatch(/^#\s+command\s+ADD$/m);
    expect(script).toMatch(/^#\s+plugin\s+bridge \(.*fake bridge\)$/m);
    expect(script).toMatch(/^#\s+pod\s+demo\/web-0 \(uid uid-web-0\)$/m);
    expect(script).toMatch(/^#\s+container\s+sandbox-1$/m);
    expect(script).toMatch(/^#\s+started\s+2025-11-21T18:33:20\.000Z$/m);
    expect(script).toMatch(/^#\s+outcome\s+exit code 0 after 42\.000 ms$/m);
  });

  it("warns that running it changes this node's network", () => {
    expect(replayScript(recordedCall())).toMatch(/WARNING: running this script changes this node's network/);
  });

  it('tells a signal from an exit code and a call whose end was not seen', () => {
    expect(replayScript(recordedCall({ exitCode: null, signal: 9 }))).toMatch(/outcome\s+killed by signal 9/);
    expect(replayScript(recordedCall({ exitCode: null, durationUs: null, status: 'incomplete', incompleteReason: 'the tracer lost its exit' }))).toMatch(
      /outcome\s+unknown \(the tracer lost its exit\)/,
    );
  });

  it('notes that a truncated stdin, a light-mode call or a delegated call cannot be replayed exactly as it ran', () => {
    const bytes = Buffer.from('{"cniVersion"');
    const script = replayScript(recordedCall({ stdin: { bytes, totalBytes: 5000, truncated: true }, captureMode: 'light', parentId: 'parent-1' }));
    expect(script).toMatch(/^# NOTE: stdin was truncated: 13 of 5000 bytes were recorded/m);
    expect(script).toMatch(/^# NOTE: the call was recorded in light mode/m);
    expect(script).toMatch(/^#\s+delegated\s+by call parent-1/m);
  });

  it('says in its header when stdin was redacted, and which values, since the replay then is not faithful', () => {
    const bytes = Buffer.from('{"cniVersion":"1.0.0","name":"n","type":"vendor","apiKey":"[redacted]"}');
    const script = replayScript(recordedCall({ stdin: { bytes, totalBytes: bytes.length + 4, truncated: false, redactions: ['/apiKey'] } }));
    const header = script.split('\ncnirec_stdin() {')[0]!;
    expect(header).toMatch(/^# NOTE: stdin was redacted before it was stored: the secret values at \/apiKey are "\[redacted\]" here/m);
    expect(header).toMatch(/this replay is not faithful/);
    expect(replayScript(recordedCall())).not.toMatch(/redacted/);
  });

  it('says in its header when CNI_ARGS or an argument was redacted', () => {
    const base = recordedCall();
    const script = replayScript(recordedCall({ env: { ...base.env, CNI_ARGS: 'K8S_POD_NAME=p;AUTH_TOKEN=[redacted]' }, argv: [base.path, '--token=[redacted]'] }));
    expect(script).toMatch(/^# NOTE: CNI_ARGS was redacted before it was stored/m);
    expect(script).toMatch(/^# NOTE: an argument was redacted before it was stored/m);
  });

  it('leaves trace context out of the environment, since a replay is not the original trace', () => {
    expect(replayScript(recordedCall())).not.toContain('TRACEPARENT');
  });
});
