/**
 * A collector outage as the exporter tracks it: when it began, how many
 * attempts failed, and how long to wait before the next (1 s doubling to
 * 30 s by default). It says when to log (the first failure of an outage,
 * the first success after one) so the log gets one line each, never one per
 * attempt. Pure: the time comes in as an argument.
 */

export interface Outage {
  readonly failingSince: number | null;
  readonly failures: number;
  /** Records a failed attempt; true when it starts an outage (log it). */
  failed(atMs: number): boolean;
  /** Records a success; the outage it ends (log it), or null when there was none. */
  succeeded(atMs: number): { readonly seconds: number; readonly failures: number } | null;
  /** How long to wait before the next attempt, growing with each call during an outage. */
  nextDelayMs(): number;
}

export function createOutage(initialMs: number, maxMs: number): Outage {
  let failingSince: number | null = null;
  let failures = 0;
  let delay = initialMs;
  return {
    get failingSince() {
      return failingSince;
    },
    get failures() {
      return failures;
    },
    failed(atMs) {
      failures++;
      if (failingSince !== null) return false;
      failingSince = atMs;
      return true;
    },
    succeeded(atMs) {
      delay = initialMs;
      if (failingSince === null) return null;
      const ended = { seconds: Math.round((atMs - failingSince) / 100) / 10, failures };
      failingSince = null;
      failures = 0;
      return ended;
    },
    nextDelayMs() {
      const d = delay;
      delay = Math.min(delay * 2, maxMs);
      return d;
    },
  };
}
