/**
 * STATUS latency kept as a histogram, not as calls: fixed buckets (the same
 * as /metrics' histogram), their sum and the longest answer. Pure.
 */

import type { LatencyTally } from './types.js';

/** Upper bounds in milliseconds; one more bucket counts what is longer. */
export const READINESS_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000] as const;

export const emptyTally = (): LatencyTally => ({ buckets: new Array<number>(READINESS_BUCKETS_MS.length + 1).fill(0), sumUs: 0, maxUs: 0 });

export function addLatency(t: LatencyTally, durationUs: number): LatencyTally {
  const ms = durationUs / 1000;
  let i = READINESS_BUCKETS_MS.findIndex((b) => ms <= b);
  if (i < 0) i = READINESS_BUCKETS_MS.length;
  const buckets = [...t.buckets];
  buckets[i] = (buckets[i] ?? 0) + 1;
  return { buckets, sumUs: t.sumUs + Math.round(durationUs), maxUs: Math.max(t.maxUs, Math.round(durationUs)) };
}

export function mergeTallies(ts: readonly LatencyTally[]): LatencyTally {
  const out = emptyTally();
  const buckets = [...out.buckets];
  let sumUs = 0;
  let maxUs = 0;
  for (const t of ts) {
    t.buckets.forEach((n, i) => (buckets[i] = (buckets[i] ?? 0) + n));
    sumUs += t.sumUs;
    maxUs = Math.max(maxUs, t.maxUs);
  }
  return { buckets, sumUs, maxUs };
}

/**
 * The q-quantile in milliseconds, as the upper bound of the bucket it falls
 * in (never above the longest answer seen); null when nothing was counted.
 */
export function quantileMs(t: LatencyTally, q: number): number | null {
  const n = t.buckets.reduce((a, b) => a + b, 0);
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (const [i, count] of t.buckets.entries()) {
    seen += count;
    if (seen >= rank) return Math.min(READINESS_BUCKETS_MS[i] ?? Infinity, t.maxUs / 1000);
  }
  return t.maxUs / 1000;
}
