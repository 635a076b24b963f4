/**
 * Settings shared by the property/fuzz tests (fast-check). A fixed seed by
 * default, so CI runs the same cases every time and a failure reproduces;
 * `FC_SEED=<n>` explores other cases, `FC_RUNS=<n>` sets every property's
 * number of runs (more to search harder, fewer for a quick look). A failing
 * property prints its seed and shrunk counterexample.
 */

import type { Parameters } from 'fast-check';

const DEFAULT_SEED = 20_251_121;

function envInt(name: string): number | null {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

export const FC_SEED = envInt('FC_SEED') ?? DEFAULT_SEED;
/** Set when FC_RUNS overrides the defaults: totals the defaults guarantee no longer hold. */
export const FC_RUNS_OVERRIDE = envInt('FC_RUNS');

/** fast-check parameters for a property that runs `defaultRuns` times unless FC_RUNS says otherwise. */
export function fcParams<T>(defaultRuns: number): Parameters<T> {
  return { seed: FC_SEED, numRuns: FC_RUNS_OVERRIDE ?? defaultRuns };
}
