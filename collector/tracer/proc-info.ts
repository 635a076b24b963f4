/**
 * The little the collector reads from /proc: who exec'd a top-level plugin
 * and whether a traced process still lives.
 */

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ParentProcess } from '../types.js';

export function describeProcess(pid: number): ParentProcess {
  return { pid, comm: readOrNull(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()), exe: readOrNull(() => readlinkSync(`/proc/${pid}/exe`)) };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * Whether `pid` is still the process that started at `startNs` (kernel
 * monotonic ns, as the tracer reports it): /proc/<pid>/stat field 22 is the
 * start in clock ticks, so a reused pid shows a different start.
 */
export function isProcessAlive(pid: number, startNs: string): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // comm (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  if (state === 'Z' || state === 'X') return false;
  const startTicks = Number(fields[19]);
  const startMs = Number(BigInt(startNs) / 1_000_000n);
  return Number.isFinite(startTicks) && Math.abs((startTicks * 1000) / TICKS_PER_SECOND - startMs) < 1000;
}

function readOrNull(read: () => string): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}

/** Live processes whose environment holds CNI_COMMAND: plugins and the helpers that inherited it. */
export function cniProcessPids(): number[] {
  const pids: number[] = [];
  const marker = Buffer.from('CNI_COMMAND=');
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`);
      if (env.indexOf(marker) === 0 || env.indexOf(Buffer.concat([Buffer.from([0]), marker])) >= 0) pids.push(Number(entry));
    } catch {
      // gone, or a kernel thread
    }
  }
  return pids;
}

/** A process's resident memory (bytes) and CPU time used (user + system, seconds); null when it is gone. */
export function processUsage(pid: number): { rssBytes: number; cpuSeconds: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 (utime, stime) in ticks; 24 (rss) in pages.
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    const rssBytes = Number(fields[21]) * PAGE_BYTES;
    return Number.isFinite(cpuSeconds) && Number.isFinite(rssBytes) ? { rssBytes, cpuSeconds } : null;
  } catch {
    return null;
  }
}

const PAGE_BYTES = 4096;
