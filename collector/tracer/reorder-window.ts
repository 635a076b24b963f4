/**
 * How long the record sequencer must hold records, from how far behind the
 * kernel bpftrace's output arrives.
 *
 * bpftrace's `nsecs` and the caller's clock are both CLOCK_MONOTONIC, so a
 * record's arrival lag is `now - ts`. A record can only come out of order
 * behind records that were printed while it sat in its CPU's buffer, so it
 * is out of order by at most its own lag; and a buffer drained late shows
 * at once in the lags of what arrives with it. When bpftrace keeps up, lags
 * are a few ms and so is any disorder; under a flood they reach seconds.
 * The window is therefore `factor` × the largest lag seen over the last
 * `horizonUs`, clamped to [minUs, maxUs]: it grows with the first late
 * record and shrinks only once the lags have stayed low for the horizon.
 *
 * Lag that comes from this process (an event-loop stall, lines waiting in
 * the pipe) widens the window without need; that costs latency, never bytes.
 *
 * Pure: the caller passes the time (kernel monotonic µs, the clock of `ts`).
 */

export interface ReorderWindowOptions {
  /** Never shorter: room for a probe preempted between taking its timestamp and printing. */
  readonly minUs: number;
  /** Never longer: how long the live tail may lag behind the node at worst. */
  readonly maxUs: number;
  /** Window per µs of the largest recent lag. */
  readonly factor: number;
  /** How long a lag keeps the window open. */
  readonly horizonUs: number;
}

/**
 * The daemon's window. Measured on a 2-CPU node (bench/README.md, "Reorder
 * window"): while bpftrace keeps up, lags stay under ~20 ms (a few stalls of
 * this process reach 50-200 ms) and records come at most ~2 ms out of
 * order; a 200-plugin burst puts them 2-4 s behind and up to ~2.6 s out of
 * order, where the window sits at its cap. The factor leaves room for a CPU
 * buffer drained later than the one that showed the lag; the short horizon
 * keeps one stall of this process from slowing the live tail for long.
 */
export const REORDER_WINDOW: ReorderWindowOptions = { minUs: 30_000, maxUs: 2_000_000, factor: 1.5, horizonUs: 2_000_000 };

/**
 * How late one CPU's buffer may be read after what was printed beside it on
 * the others, for what is known to be in it: a frame's chunk lines, the exit
 * of a call's child. Past the window's cap: a burst puts records up to ~2.6 s
 * out of order (above), and the simulation's lagging node up to 3.5 s.
 */
export const BUFFER_READ_LATE_US = 5_000_000;

/** Resolution of the horizon: a lag is forgotten between 0.9 × and 1 × horizonUs after it was seen. */
const BUCKETS = 10;

export class ReorderWindow {
  private readonly bucketUs: number;
  /** Largest lag per bucket of time, and which bucket (time / bucketUs) the slot holds now. */
  private readonly maxima = new Float64Array(BUCKETS);
  private readonly epochs = new Float64Array(BUCKETS).fill(-Infinity);

  constructor(readonly options: ReorderWindowOptions) {
    if (!(options.minUs >= 0 && options.maxUs >= options.minUs && options.factor >= 0 && options.horizonUs > 0)) {
      throw new RangeError(`invalid reorder window options ${JSON.stringify(options)}`);
    }
    this.bucketUs = options.horizonUs / BUCKETS;
  }

  /** A record stamped `ts` arrived at `nowUs`. */
  observe(ts: number, nowUs: number): void {
    this.observeLag(nowUs - ts, nowUs);
  }

  /** A record arrived `lagUs` after its timestamp; seen as of `nowUs` (a frame's first line may have come a little before). */
  observeLag(lagUs: number, nowUs: number): void {
    const lag = Math.max(0, lagUs);
    const epoch = Math.floor(nowUs / this.bucketUs);
    const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
    if (this.epochs[slot] !== epoch) {
      this.epochs[slot] = epoch;
      this.maxima[slot] = lag;
    } else if (lag > this.maxima[slot]!) {
      this.maxima[slot] = lag;
    }
  }

  /** The largest lag seen within the horizon before `nowUs`; 0 when none. */
  maxLagUs(nowUs: number): number {
    const oldest = Math.floor(nowUs / this.bucketUs) - BUCKETS;
    let max = 0;
    for (let i = 0; i < BUCKETS; i++) if (this.epochs[i]! > oldest && this.maxima[i]! > max) max = this.maxima[i]!;
    return max;
  }

  /** How far the stream must have moved past a record, as of `nowUs`, before nothing older can still come. */
  windowUs(nowUs: number): number {
    return Math.min(this.options.maxUs, this.clockWindowUs(nowUs));
  }

  /**
   * How long after its timestamp, by the clock, a record waits as of
   * `nowUs` before nothing older can still come: anything older would
   * arrive later than `factor` × the largest recent lag. Not capped: under
   * a flood lags outgrow `maxUs`, and the clock must then not pass records
   * the stream has not.
   */
  clockWindowUs(nowUs: number): number {
    const { minUs, factor } = this.options;
    return Math.max(minUs, factor * this.maxLagUs(nowUs));
  }
}
