// The path an exec ran, rebuilt from the tracer's X, N and C lines: a long path whole, a relative one
// made absolute against the working directory the kernel resolved it against, and a relative CNI_PATH entry too.
import { describe, expect, it } from 'vitest';
import { resolveExecPath } from '../../collector/assemble/exec-path.js';
import { ExecPathParts } from '../../collector/tracer/exec-path-parts.js';
import { isInCniPath } from '../../collector/assemble/cni-env.js';
import { parseTracerLine, type TracerRecord } from '../../bpf/tracer-protocol.js';
import { cwdLines, execLines } from '../support/tracer-lines.js';

/** The parts of an exec as the tracer sends them for this spec (lines through the parser). */
function partsOf(lines: readonly string[]): ExecPathParts {
  const parts = new ExecPathParts();
  for (const line of lines) {
    const r = parseTracerLine(line);
    if (!r.ok) throw r.error;
    const rec: TracerRecord = r.record;
    if (rec.kind === 'exec-path-chunk') parts.addPathChunk(rec.len, rec.off, rec.data);
    if (rec.kind === 'exec-cwd-name') parts.addCwdName(rec.depth, rec.name);
  }
  return parts;
}

const headerPath = (lines: readonly string[]) => lines[0]!.split(' ').slice(10).join(' ');
const LONG = `/opt/${'a'.repeat(120)}/${'b é'.repeat(60)}/${'c'.repeat(90)}/host-local`;

describe('the path of an exec', () => {
  it('is the X line’s when it is short, and not cut', () => {
    const lines = execLines({ ts: 1, pid: 7, ppid: 1, start: 1, path: '/opt/cni/bin/bridge' });
    expect(lines.some((l) => l.startsWith('N '))).toBe(false);
    expect(partsOf(lines).filename(headerPath(lines))).toEqual({ filename: '/opt/cni/bin/bridge', cut: false });
  });

  it('is whole from the N lines when the X line cut it (multi-byte characters included)', () => {
    const lines = execLines({ ts: 1, pid: 7, ppid: 1, start: 1, path: LONG, argv: ['x'] });
    expect(LONG.startsWith(headerPath(lines).slice(0, 150))).toBe(true);
    expect(headerPath(lines).length).toBeLessThan(LONG.length);
    expect(partsOf(lines).filename(headerPath(lines))).toEqual({ filename: LONG, cut: false });
  });

  it('of exactly 199 bytes comes with an N line read from one byte before it', () => {
    const path = `/${'p'.repeat(198)}`;
    const lines = execLines({ ts: 1, pid: 7, ppid: 1, start: 1, path });
    expect(lines.filter((l) => l.startsWith('N ')).map((l) => l.split(' ').slice(0, 4).join(' '))).toEqual(['N 7 199 -1']);
    expect(partsOf(lines).filename(headerPath(lines))).toEqual({ filename: path, cut: false });
  });

  it('is marked cut when N lines were lost: the longest beginning that came', () => {
    const lines = execLines({ ts: 1, pid: 7, ppid: 1, start: 1, path: LONG });
    const header = headerPath(lines);
    expect(partsOf(lines.filter((l) => !l.startsWith('N '))).filename(header)).toEqual({ filename: header, cut: true });
    const firstOnly = lines.filter((l, i) => !l.startsWith('N ') || lines[i - 1]!.startsWith('X '));
    const got = partsOf(firstOnly).filename(header);
    expect(got.cut).toBe(true);
    expect(LONG.startsWith(got.filename)).toBe(true);
  });
});

describe('the working directory of a relative exec', () => {
  it('is the names joined from the root down', () => {
    expect(partsOf(cwdLines(7, '/usr/lib/cni')).cwd()).toBe('/usr/lib/cni');
    expect(partsOf(cwdLines(7, '/')).cwd()).toBe('/');
    expect(partsOf(cwdLines(7, '/srv/a b/x\ny')).cwd()).toBe('/srv/a b/x\ny');
  });

  it('is unknown when the walk stopped short (no root line) or a name is missing', () => {
    const deep = `/${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}`;
    expect(cwdLines(7, deep).some((l) => l.endsWith(' '))).toBe(false);
    expect(partsOf(cwdLines(7, deep)).cwd()).toBeNull();
    const lines = cwdLines(7, '/usr/lib/cni');
    expect(partsOf(lines.filter((l) => !l.startsWith('C 7 1 '))).cwd()).toBeNull();
    expect(new ExecPathParts().cwd()).toBeNull();
  });

  it('makes a relative path absolute, and leaves an absolute one or one without a directory as it is', () => {
    expect(resolveExecPath('./host-local', '/usr/lib/cni')).toBe('/usr/lib/cni/host-local');
    expect(resolveExecPath('lib/cni/host-local', '/usr')).toBe('/usr/lib/cni/host-local');
    expect(resolveExecPath('../cni/./host-local', '/usr/lib/x')).toBe('/usr/lib/cni/host-local');
    expect(resolveExecPath('host-local', '/')).toBe('/host-local');
    expect(resolveExecPath('/opt/cni/bin/bridge', '/tmp')).toBe('/opt/cni/bin/bridge');
    expect(resolveExecPath('./host-local', null)).toBe('./host-local');
  });
});

describe('CNI_PATH with relative entries', () => {
  it('resolves them against the working directory when it is known', () => {
    expect(isInCniPath('/usr/lib/cni/host-local', 'lib/cni', '/usr')).toBe(true);
    expect(isInCniPath('/usr/lib/cni/host-local', './lib/cni/:/opt/cni/bin', '/usr')).toBe(true);
    expect(isInCniPath('/usr/lib/cni/host-local', '.', '/usr/lib/cni')).toBe(true);
    expect(isInCniPath('/usr/lib/cni/host-local', 'lib/cni', '/opt')).toBe(false);
  });

  it('compares them as written when it is not', () => {
    expect(isInCniPath('lib/cni/host-local', 'lib/cni')).toBe(true);
    expect(isInCniPath('/usr/lib/cni/host-local', 'lib/cni')).toBe(false);
    expect(isInCniPath('/usr/lib/cni/host-local', '/usr/lib/cni/')).toBe(true);
  });
});
