/**
 * How many records the tracer lost lately. The tracer counts losses since
 * the daemon started; /healthz is degraded while some were lost within the
 * window, so a burst that overflowed bpftrace's buffers shows (with its
 * count) for a while and then clears, instead of never (the total only
 * grows) or not at all. Pure: fed samples of the running total with their time.
 */

export const LOSS_WINDOW_MS = 10 * 60_000;

export interface LossWindow {
  /** Records the total at `nowMs`. */
  observe(total: number, nowMs: number): void;
  /** Lost within the window before `nowMs` (after observing the total then). */
  recent(nowMs: number): number;
}

export function createLossWindow(startMs: number, windowMs = LOSS_WINDOW_MS): LossWindow {
  // Oldest first; the first is the total at the start (0: the tracer counts from the daemon's start).
  const samples: { atMs: number; total: number }[] = [{ atMs: startMs, total: 0 }];
  return {
    observe(total, nowMs) {
      const last = samples.at(-1)!;
      // A lower total: a new count began (a restarted collector); start over from it.
      if (total < last.total) samples.splice(0, samples.length, { atMs: nowMs, total: 0 });
      if (total !== samples.at(-1)!.total) samples.push({ atMs: nowMs, total });
      // Keep one sample at or before the window's start: the baseline.
      while (samples.length > 1 && samples[1]!.atMs <= nowMs - windowMs) samples.shift();
    },
    recent(nowMs) {
      // The baseline: the last sample at or before the window's start, else the first (the start, or a restart).
      let baseline = samples[0]!;
      for (const s of samples) if (s.atMs <= nowMs - windowMs) baseline = s;
      return samples.at(-1)!.total - baseline.total;
    },
  };
}
