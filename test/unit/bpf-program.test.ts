// The program text per capture mode and payload path: which probes each one holds.
import { describe, expect, it } from 'vitest';
import { IOV_LIMIT } from '../../bpf/index.js';
import { programText } from '../../bpf/program.js';

const probes = (text: string) => text.split('\n').filter((l) => /^(tracepoint|BEGIN|END)/.test(l));

describe('the bpftrace program per mode', () => {
  it('light mode has no syscall probe at all: the node keeps its fast syscall path', () => {
    const text = programText('light');
    expect(probes(text).join('\n')).not.toMatch(/syscalls?:/);
    // And the kernel's extack messages, a tracepoint of netlink's, not of a syscall; and task_newtask for a clone's flags.
    expect(probes(text).every((p) => p.startsWith('tracepoint:sched:') || p === 'tracepoint:task:task_newtask' || p === 'tracepoint:netlink:netlink_extack' || p === 'BEGIN' || p === 'END')).toBe(true);
    expect(probes(text)).toContain('tracepoint:task:task_newtask');
    expect(probes(text)).toContain('tracepoint:netlink:netlink_extack');
  });

  it('full mode takes payloads at syscall exit: one raw probe, one per iovec taken on readv/writev, and the rest counted', () => {
    const text = programText('full');
    expect(probes(text).filter((p) => p === 'tracepoint:raw_syscalls:sys_exit')).toHaveLength(1);
    expect(probes(text).filter((p) => p.includes('sys_exit_writev'))).toHaveLength(IOV_LIMIT + 1);
    // At entry, only the syscalls that change the kernel (their own tracepoints: a read or write pays nothing for them).
    expect(probes(text).filter((p) => p.includes('sys_enter_')).sort()).toEqual([
      'tracepoint:syscalls:sys_enter_openat',
      'tracepoint:syscalls:sys_enter_recvfrom',
      'tracepoint:syscalls:sys_enter_recvmsg',
      'tracepoint:syscalls:sys_enter_sendmsg',
      'tracepoint:syscalls:sys_enter_sendmsg',
      'tracepoint:syscalls:sys_enter_sendto',
      'tracepoint:syscalls:sys_enter_sendto',
    ]);
    expect(text).not.toMatch(/NL_CAP/);
    // The placeholders are replaced in the code (the comments may still name them).
    expect(text.split('\n').filter((l) => !/^\s*(\/\*|\*)/.test(l)).join('\n')).not.toMatch(/IOV_INDEX|IOV_LIMIT/);
    for (let i = 0; i < IOV_LIMIT; i++) expect(text).toContain(`${i} < $r->dx`);
  });

  it('the fallback takes them at syscall entry, without the exit probes', () => {
    const text = programText('full', [], undefined, 'syscall-entry');
    expect(text).toMatch(/tracepoint:syscalls:sys_enter_write/);
    expect(probes(text).join('\n')).not.toMatch(/raw_syscalls|sys_exit_writev/);
  });

  it('puts few programs on sched_process_exec: the kernel takes 64 per tracepoint, for every tracer of the node', () => {
    // Two tracers per daemon (main and standby), three during a mode switch, two daemons in a rolling update.
    for (const text of [programText('light'), programText('full'), programText('full', [], undefined, 'syscall-entry')]) {
      expect(text.match(/^tracepoint:sched:sched_process_exec$/gm)!.length).toBeLessThanOrEqual(8);
    }
  });

  it('seeds the processes another run follows', () => {
    expect(programText('full', [42, 43])).toContain('@cni[42] = 1; @cni[43] = 1;');
  });
});
