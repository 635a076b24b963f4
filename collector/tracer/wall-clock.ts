/**
 * Maps the tracer's clock (CLOCK_MONOTONIC, bpftrace's nsecs) to Unix time.
 *
 * The two clocks run at the same rate but drift apart in steps: an NTP step,
 * an administrator setting the date, a suspend (the monotonic clock stops,
 * the wall clock does not). An offset taken once at start-up would put every
 * later call at the wrong wall time after such a step, and libcni's cache
 * files (wall-clock mtimes) would no longer link to their calls, whose slack
 * is 50 ms. So the offset is re-checked every few seconds, cheaply at
 * Date.now()'s millisecond resolution, and taken again precisely only when
 * it moved by more than `stepUs` (sub-millisecond jitter of the cheap check
 * must never move timestamps, or a call's end could land before its start).
 */

export interface ClockSources {
  /** CLOCK_MONOTONIC in µs (process.hrtime reads it). */
  monoUs(): number;
  /** Unix time in ms. */
  epochMs(): number;
}

export const systemClocks: ClockSources = {
  monoUs: () => Number(process.hrtime.bigint() / 1000n),
  epochMs: () => Date.now(),
};

export interface WallClockOptions {
  /** How often the offset is checked against the wall clock. */
  readonly checkEveryUs?: number;
  /** A change beyond this is a step of the wall clock: the offset is taken again. */
  readonly stepUs?: number;
  /** Told of each step (µs, positive when the wall clock jumped forward). */
  readonly onStep?: (stepUs: number) => void;
}

const DEFAULT_CHECK_EVERY_US = 5_000_000;
const DEFAULT_STEP_US = 20_000;

/**
 * The offset to µs precision: read both clocks on the edge where Date.now()
 * ticks to its next millisecond. Spins for up to 1 ms, so only at start-up
 * and after a step.
 */
export function preciseOffsetUs(src: ClockSources): number {
  const first = src.epochMs();
  let ms = first;
  let mono = src.monoUs();
  // A clock source that never ticks (a test's fake) gives its rough offset.
  for (let spins = 0; ms === first && spins < 1_000_000; spins++) {
    ms = src.epochMs();
    mono = src.monoUs();
  }
  return ms * 1000 - mono;
}

export class MonoToEpoch {
  private offsetUs: number;
  private checkedAtUs: number;
  private readonly checkEveryUs: number;
  private readonly stepUs: number;

  constructor(
    private readonly src: ClockSources = systemClocks,
    private readonly opts: WallClockOptions = {},
  ) {
    this.checkEveryUs = opts.checkEveryUs ?? DEFAULT_CHECK_EVERY_US;
    this.stepUs = opts.stepUs ?? DEFAULT_STEP_US;
    this.offsetUs = preciseOffsetUs(src);
    this.checkedAtUs = src.monoUs();
  }

  /** A tracer timestamp (µs, monotonic) as Unix µs, by the wall clock as it stands now. */
  toEpochUs(monoUs: number): number {
    this.check();
    return monoUs + this.offsetUs;
  }

  get currentOffsetUs(): number {
    return this.offsetUs;
  }

  private check(): void {
    const now = this.src.monoUs();
    if (now - this.checkedAtUs < this.checkEveryUs) return;
    this.checkedAtUs = now;
    // Date.now() is floored to the ms: the rough offset lies 0-1 ms below the true one.
    const rough = this.src.epochMs() * 1000 - now;
    if (Math.abs(rough + 500 - this.offsetUs) <= this.stepUs) return;
    const next = preciseOffsetUs(this.src);
    this.opts.onStep?.(next - this.offsetUs);
    this.offsetUs = next;
  }
}
