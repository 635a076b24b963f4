import { describe, expect, it } from 'vitest';
import { checkPrivileges, runPreflight } from '../../collector/tracer/preflight.js';

const status = (capEff: string) => `Name:\tnode\nCapEff:\t${capEff}\n`;

describe('startup checks', () => {
  it.each([
    ['root (all capabilities)', '000001ffffffffff', true],
    ['CAP_SYS_ADMIN alone', (1n << 21n).toString(16).padStart(16, '0'), true],
    ['CAP_BPF and CAP_PERFMON', ((1n << 39n) | (1n << 38n)).toString(16).padStart(16, '0'), true],
    ['CAP_BPF without CAP_PERFMON', (1n << 39n).toString(16).padStart(16, '0'), false],
    ['no capabilities', '0000000000000000', false],
  ])('privileges: %s → allowed %s', (_name, caps, allowed) => {
    const problem = checkPrivileges(status(caps));
    expect(problem === null).toBe(allowed);
    if (problem) expect(problem.message).toMatch(/needs root/);
  });

  it('gives one sentence each for a missing bpftrace, tracefs and BTF', () => {
    const problems = runPreflight({
      bpftracePath: '/nonexistent/bpftrace',
      mountTracefs: false,
      tracefsPath: '/nonexistent/tracing',
      btfPath: '/nonexistent/vmlinux',
      procStatus: status('000001ffffffffff'),
    });
    expect(problems.map((p) => p.check)).toEqual(['bpftrace', 'tracefs', 'btf']);
    expect(problems[0]!.message).toContain('apt-get install -y bpftrace');
    expect(problems[1]!.message).toContain('mount -t tracefs nodev /nonexistent/tracing');
    expect(problems[2]!.message).toContain('CONFIG_DEBUG_INFO_BTF');
    for (const p of problems) expect(p.message.split('. ').length).toBeLessThanOrEqual(2);
  });
});
