/** Percentiles, medians and the CPU and memory bookkeeping the benchmarks report with their measurements. */

import { readFileSync } from 'node:fs';
import { procStat } from './proc-tree.js';

export interface Distribution {
  readonly n: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly min: number;
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
function rank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    mean: round(sorted.length === 0 ? Number.NaN : sum / sorted.length),
    p50: round(rank(sorted, 50)),
    p90: round(rank(sorted, 90)),
    p99: round(rank(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    min: round(sorted[0] ?? Number.NaN),
  };
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Three decimals: µs resolution on millisecond values. */
export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

// --------------------------------------------------------------------- CPU

/** All CPUs' time since boot from /proc/stat, in clock ticks: busy, and in all. */
export interface CpuTotals {
  readonly busy: number;
  readonly total: number;
}

export function cpuTotals(): CpuTotals {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/** utime + stime of a process, in clock ticks; 0 when it is gone. */
export const processTicks = (pid: number): number => procStat(pid)?.ticks ?? 0;

export interface CpuShare {
  /** Busy share of all CPUs (0..1) over the window. */
  readonly busy: number;
  /** The part of it not spent by this benchmark, the daemon or its tracer: other people's work on the machine. */
  readonly foreign: number;
}

/** Starts a window; the returned function ends it. `pids()` names the processes that are ours. */
export function cpuWindow(pids: () => readonly number[]): () => CpuShare {
  const a = cpuTotals();
  const oursA = pids().reduce((s, p) => s + processTicks(p), 0);
  return () => {
    const b = cpuTotals();
    const oursB = pids().reduce((s, p) => s + processTicks(p), 0);
    const total = Math.max(1, b.total - a.total);
    const busy = (b.busy - a.busy) / total;
    // Read both ends while the processes live: a pid gone by the end reads 0 and would count as negative.
    const ours = Math.max(0, oursB - oursA) / total;
    return { busy: round(busy), foreign: round(Math.min(1, Math.max(0, busy - ours))) };
  };
}

/**
 * Waits (at most `maxMs`, and at most what is left of a shared budget) until
 * the machine is quiet, so other people's builds land on fewer measurements.
 * Returns the busy share of the last half second.
 */
export function createQuietGate(totalBudgetMs: number): (maxMs: number, threshold: number) => Promise<number> {
  let budget = totalBudgetMs;
  return async (maxMs, threshold) => {
    const start = Date.now();
    const deadline = start + Math.min(maxMs, budget);
    try {
      for (;;) {
        const a = cpuTotals();
        await new Promise((r) => setTimeout(r, 500));
        const b = cpuTotals();
        const busy = (b.busy - a.busy) / Math.max(1, b.total - a.total);
        if (busy < threshold || Date.now() >= deadline) return round(busy);
      }
    } finally {
      budget = Math.max(0, budget - (Date.now() - start));
    }
  };
}

// --------------------------------------------------------------------- memory

export interface ProcMemory {
  /** Resident set now, MiB. */
  readonly vmRssMiB: number;
  /** Peak resident set since the process started, MiB. */
  readonly vmHwmMiB: number;
}

export function procMemory(pid: number): ProcMemory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { vmRssMiB: round(kib('VmRSS') / 1024, 1), vmHwmMiB: round(kib('VmHWM') / 1024, 1) };
  } catch {
    return null;
  }
}
