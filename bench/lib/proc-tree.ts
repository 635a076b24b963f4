/**
 * Process tree from /proc, for benchmarks that must account for or clean up
 * what a process started (the daemon's bpftrace, strace's tracee): killing
 * only the top process would leave its children running and skewing later
 * measurements.
 */

import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  ppid: number;
  comm: string;
  /** utime + stime, in clock ticks */
  ticks: number;
}

export function procStat(pid: number): ProcStat | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = s.indexOf('(');
    const close = s.lastIndexOf(')');
    const rest = s.slice(close + 2).split(' ');
    return { comm: s.slice(open + 1, close), ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) };
  } catch {
    return null;
  }
}

/** Whether `pid` exists (a zombie too): signal 0 checks without sending anything. */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function allPids(): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
}

export function descendants(pid: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const p of allPids()) {
    const st = procStat(p);
    if (!st) continue;
    const list = byParent.get(st.ppid) ?? [];
    list.push(p);
    byParent.set(st.ppid, list);
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    for (const c of byParent.get(stack.pop()!) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** SIGKILL to the child and everything below it. */
export function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  for (const p of descendants(child.pid)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  child.kill('SIGKILL');
}
