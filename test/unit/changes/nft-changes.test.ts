import { describe, expect, it } from 'vitest';
import { MAX_COMMANDS, parseNftScript } from '../../../collector/changes/nft-script.js';
import { nftChanges, type HelperRun } from '../../../collector/changes/nft-helper.js';
import type { CapturedStream } from '../../../collector/types.js';
import { replay } from '../../support/replay.js';
import { SAMPLE_CNI_ENV, execLines, exitLine, forkLine, helloLine, readLines, writeLines } from '../../support/tracer-lines.js';

const subjects = (script: string) => parseNftScript(script).commands.map((c) => `${c.action}: ${c.subject}`);

describe('an nft script, as the commands that change the ruleset', () => {
  it('spells out the block form: the table, its chain with its properties, each rule, a set and its elements', () => {
    const script = `#!/usr/sbin/nft -f
# the pod's rules
table inet cni_pod {
  set allowed {
    type ipv4_addr
    flags interval
    elements = { 10.0.0.0/8, 192.168.1.1 }
  }
  chain fwd {
    type filter hook forward priority 0; policy drop;
    iifname "cni0" ip saddr @allowed accept  # from the pods
    tcp dport { 22,
                80 } counter accept
  }
}
`;
    expect(subjects(script)).toEqual([
      'add: add table inet cni_pod',
      'add: add set inet cni_pod allowed { type ipv4_addr; flags interval; }',
      'add: add element inet cni_pod allowed { 10.0.0.0/8, 192.168.1.1 }',
      'add: add chain inet cni_pod fwd { type filter hook forward priority 0; policy drop; }',
      'add: add rule inet cni_pod fwd iifname "cni0" ip saddr @allowed accept',
      'add: add rule inet cni_pod fwd tcp dport { 22, 80 } counter accept',
    ]);
    expect(parseNftScript(script).error).toBeNull();
  });

  it('takes each command form, with the family nft assumes (ip) spelt out, and leaves reads and definitions out', () => {
    const script = [
      'add table nat',
      'add chain nat post { type nat hook postrouting priority 100 ; }',
      'insert rule ip nat post position 3 oifname "eth0" masquerade',
      'replace rule inet f c handle 7 drop; delete rule inet f c handle 8',
      'add element inet f s { 1.2.3.4 }',
      'flush chain inet f c',
      'flush ruleset',
      'delete table inet old',
      'destroy table inet gone',
      'create table inet fresh',
      'list ruleset',
      'list table inet f',
      'define lan = 10.0.0.0/8',
      'reset counters',
    ].join('\n');
    expect(subjects(script)).toEqual([
      'add: add table ip nat',
      'add: add chain ip nat post { type nat hook postrouting priority 100; }',
      'add: insert rule ip nat post position 3 oifname "eth0" masquerade',
      'change: replace rule inet f c handle 7 drop',
      'delete: delete rule inet f c handle 8',
      'add: add element inet f s { 1.2.3.4 }',
      'delete: flush chain inet f c',
      'delete: flush ruleset',
      'delete: delete table inet old',
      'delete: destroy table inet gone',
      'add: create table inet fresh',
      'change: reset counters',
    ]);
  });

  it('reads lists spread over lines (a verdict map, elements one a line) as one rule and one element command', () => {
    const script = `table inet t {
  set s {
    type ipv4_addr
    elements = {
      10.0.0.1,
      10.0.0.2
    }
  }
  chain c {
    ip protocol vmap {
      tcp : jump tcp_in,
      udp : jump udp_in
    }
    meta comment "a; b # c" accept
  }
}`;
    expect(subjects(script)).toEqual([
      'add: add table inet t',
      'add: add set inet t s { type ipv4_addr; }',
      'add: add element inet t s { 10.0.0.1, 10.0.0.2 }',
      'add: add chain inet t c',
      'add: add rule inet t c ip protocol vmap { tcp : jump tcp_in, udp : jump udp_in }',
      'add: add rule inet t c meta comment "a; b # c" accept',
    ]);
  });

  it('reads a one-line block and a table given without a verb', () => {
    expect(subjects('table ip t { chain c { type filter hook input priority 0; ip saddr 1.1.1.1 drop; } ; }')).toEqual([
      'add: add table ip t',
      'add: add chain ip t c { type filter hook input priority 0; }',
      'add: add rule ip t c ip saddr 1.1.1.1 drop',
    ]);
  });

  it('keeps what came before a fault and says where it is: an unclosed string, a stray }, an unclosed block', () => {
    const unclosed = parseNftScript('add table inet a\nadd rule inet a c meta comment "oops\nadd table inet b\n');
    expect(unclosed.commands.map((c) => c.subject)).toEqual(['add table inet a']);
    expect(unclosed.error).toBe('a string is not closed (line 2)');
    expect(parseNftScript('add table inet a\n}\n').error).toBe('a } closes nothing (line 2)');
    const open = parseNftScript('add table inet a\ntable inet b { chain c {\n');
    expect(open.commands.map((c) => c.subject)).toEqual(['add table inet a']);
    expect(open.error).toBe('2 block(s) not closed at the end');
  });

  it('survives hostile and huge input: deep braces, a flood of commands, binary bytes, one endless line', () => {
    const deep = parseNftScript(`add table inet x\nadd rule inet x c ${'{ '.repeat(10_000)}`);
    expect(deep.error).toMatch(/nested deeper than/);
    expect(deep.commands).toHaveLength(1);

    const flood = parseNftScript('add table inet x;'.repeat(20_000));
    expect(flood.commands).toHaveLength(MAX_COMMANDS);
    expect(flood.more).toBe(20_000 - MAX_COMMANDS);

    const binary = parseNftScript(Buffer.from(Array.from({ length: 65_536 }, (_, i) => (i * 7919) % 256)).toString('latin1'));
    expect(Array.isArray(binary.commands)).toBe(true);

    // Many quotes on one line: read in one pass (a scan to the line's end per string would take minutes).
    const quotes = parseNftScript(`add rule inet x c ${'"a" '.repeat(16_000)}`);
    expect(quotes.error).toBeNull();
    expect(quotes.commands[0]!.subject.length).toBeLessThanOrEqual(1001);
    expect(quotes.commands[0]!.subject.endsWith('…')).toBe(true);
  });
});

const stream = (text: string, extra: Partial<CapturedStream> = {}): CapturedStream => ({ bytes: Buffer.from(text), totalBytes: Buffer.byteLength(text), truncated: false, ...extra });
const nft = (argv: string[], opts: { stdin?: string; exit?: number; stderr?: string } = {}): HelperRun => ({
  pid: 7,
  ppid: 6,
  path: '/usr/sbin/nft',
  argv: ['nft', ...argv],
  startedAtUs: 1,
  endedAtUs: 2,
  outcome: { exitCode: opts.exit ?? 0, signal: null, coreDumped: false },
  stdout: stream(''),
  stderr: stream(opts.stderr ?? ''),
  ...(opts.stdin !== undefined ? { stdin: stream(opts.stdin) } : {}),
});

describe('the changes of an nft helper', () => {
  it('decodes argv as nft joins it, and a script read on stdin; a dry run and a listing change nothing', () => {
    expect(nftChanges(nft(['add', 'rule', 'inet', 'x', 'y', 'tcp', 'dport', '22', 'accept']), 1, 'host').map((c) => [c.action, c.subject, c.attributes?.source])).toEqual([
      ['add', 'add rule inet x y tcp dport 22 accept', 'argv'],
    ]);
    expect(nftChanges(nft(['-f', '-'], { stdin: 'table inet x {\n chain y {\n }\n}\n' }), 1, 'host').map((c) => c.subject)).toEqual(['add table inet x', 'add chain inet x y']);
    expect(nftChanges(nft(['-f', '/dev/stdin'], { stdin: 'delete table inet x\n' }), 1, 'host').map((c) => c.subject)).toEqual(['delete table inet x']);
    expect(nftChanges(nft(['-c', '-f', '-'], { stdin: 'add table inet x\n' }), 1, 'host')).toEqual([]);
    expect(nftChanges(nft(['list', 'ruleset']), 1, 'host')).toEqual([]);
    expect(nftChanges(nft(['-a', '-n', 'list', 'table', 'inet', 'x']), 1, 'host')).toEqual([]);
  });

  it('marks every command of a refused script failed, with nft\'s own error line', () => {
    const changes = nftChanges(nft(['-f', '-'], { stdin: 'add table inet x\nadd chain inet x y\n', exit: 1, stderr: '/dev/stdin:2:1-20: Error: Could not process rule: No such file or directory\nadd chain inet x y\n' }), 1, 'host');
    expect(changes.map((c) => [c.ok, c.error])).toEqual([
      [false, { errno: 'exit 1', message: 'Could not process rule: No such file or directory' }],
      [false, { errno: 'exit 1', message: 'Could not process rule: No such file or directory' }],
    ]);
  });

  it('says so when the script was not taken: a file, stdin not captured, a JSON ruleset', () => {
    expect(nftChanges(nft(['-f', '/etc/cni/rules.nft']), 1, 'host').map((c) => c.subject)).toEqual(['-f /etc/cni/rules.nft (its commands were not taken)']);
    expect(nftChanges(nft(['-f', '-']), 1, 'host').map((c) => c.subject)).toEqual(['-f - (its script was not captured)']);
    expect(nftChanges(nft(['-j', '-f', '-'], { stdin: '{"nftables": []}' }), 1, 'host').map((c) => c.subject)).toEqual(['(a JSON ruleset of 16 bytes, not decoded)']);
  });
});

describe('an nft helper of a shell plugin, through the assembler', () => {
  it('keeps the script nft read on its stdin (a pipe of its own) and lists its commands in the call\'s changes', () => {
    const ms = 1_000_000;
    const STDIO = [1000, 1001, 1002] as const;
    const script = 'table inet cnirec_t {\n  chain c {\n    type filter hook input priority 0;\n    tcp dport 9 drop\n  }\n}\n';
    const lines = [
      helloLine('full'),
      ...execLines({ ts: 10 * ms, pid: 100, ppid: 1, start: 5 * ms, path: '/opt/cni/bin/nftp', env: SAMPLE_CNI_ENV, stdio: STDIO }),
      ...readLines({ ts: 11 * ms, pid: 100, file: STDIO[0] }, '{"cniVersion":"1.0.0"}'),
      forkLine(12 * ms, 100, 101),
      // nft's stdin is a pipe from the plugin (file 2000), not the call's stdin.
      ...execLines({ ts: 13 * ms, pid: 101, ppid: 100, start: 12 * ms, path: '/usr/sbin/nft', argv: ['nft', '-f', '-'], env: SAMPLE_CNI_ENV, stdio: [2000, STDIO[1], STDIO[2]] }),
      ...readLines({ ts: 14 * ms, pid: 101, file: 2000 }, script),
      exitLine({ ts: 15 * ms, pid: 101, start: 12 * ms, code: 0 }),
      ...writeLines({ ts: 16 * ms, pid: 100, file: STDIO[1], fd: 1 }, '{}'),
      exitLine({ ts: 17 * ms, pid: 100, start: 5 * ms, code: 0 }),
    ];
    const r = replay(lines);
    const call = r.finished.find((c) => c.plugin === 'nftp')!;
    expect(call.stdin.bytes.toString()).toBe('{"cniVersion":"1.0.0"}');
    expect(call.changes!.map((c) => `${c.netns} ${c.object} ${c.action} ${c.subject}`)).toEqual([
      'host nftables add add table inet cnirec_t',
      'host nftables add add chain inet cnirec_t c { type filter hook input priority 0; }',
      'host nftables add add rule inet cnirec_t c tcp dport 9 drop',
    ]);
    // The script is read for the changes, not published with the helper.
    expect(Object.keys(call.helpers[0]!)).not.toContain('stdin');
  });
});
