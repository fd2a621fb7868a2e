/**
 * The rate of a growing counter over a sliding window: samples are `(time, value)` pairs, pushed
 * about once per second; the rate is the growth between the oldest and the newest sample in the
 * window, per second. When no sample has arrived for a while (a stalled child prints nothing),
 * the rate decays towards 0 instead of freezing at its last value.
 */
export class RateWindow {
  private readonly times: Float64Array;
  private readonly values: Float64Array;
  private head = 0;
  private size = 0;

  /**
   * @param windowMs length of the window, milliseconds
   * @param capacity most samples kept (older ones are dropped first)
   */
  constructor(
    private readonly windowMs = 10_000,
    capacity = 32,
  ) {
    this.times = new Float64Array(capacity);
    this.values = new Float64Array(capacity);
  }

  /** Adds a sample; a counter that went backwards (a new run) starts the window over. */
  push(timeMs: number, value: number): void {
    if (this.size > 0 && value < this.valueAt(this.size - 1)) this.clear();
    const index = (this.head + this.size) % this.times.length;
    this.times[index] = timeMs;
    this.values[index] = value;
    if (this.size < this.times.length) this.size++;
    else this.head = (this.head + 1) % this.times.length;
  }

  /** Units per second over the window ending at `nowMs`; 0 with fewer than two samples. */
  rate(nowMs: number): number {
    while (this.size > 0 && this.timeAt(0) < nowMs - this.windowMs) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
    if (this.size < 2) return 0;
    const first = this.timeAt(0);
    const last = this.timeAt(this.size - 1);
    const growth = this.valueAt(this.size - 1) - this.valueAt(0);
    // A sample is due every second or so; beyond that the counter is stalled.
    const end = nowMs - last > STALL_MS ? nowMs : last;
    return end > first ? (growth * 1000) / (end - first) : 0;
  }

  /**
   * A time until which `rate` gives what it gives at `nowMs` (just called) and drops no sample:
   * the oldest sample leaves the window after `windowMs`, and the newest counts as stalled after
   * STALL_MS (from then on the rate moves with the clock; `nowMs` itself when it does already).
   * One millisecond short of each, so that rounding cannot put the bound past the comparisons
   * `rate` makes.
   */
  stableUntil(nowMs: number): number {
    if (this.size === 0) return Infinity;
    const expiry = this.timeAt(0) + this.windowMs - 1;
    if (this.size < 2) return expiry;
    const last = this.timeAt(this.size - 1);
    return Math.min(expiry, nowMs - last > STALL_MS ? nowMs : last + STALL_MS - 1);
  }

  /** How many samples the window holds (before `rate` drops the old ones). */
  samples(): number {
    return this.size;
  }

  /** Time of the newest sample, ms; 0 when there is none. */
  lastTime(): number {
    return this.size === 0 ? 0 : this.timeAt(this.size - 1);
  }

  /** Value of the newest sample; 0 when there is none. */
  lastValue(): number {
    return this.size === 0 ? 0 : this.valueAt(this.size - 1);
  }

  clear(): void {
    this.head = 0;
    this.size = 0;
  }

  private timeAt(offset: number): number {
    return this.times[(this.head + offset) % this.times.length] as number;
  }

  private valueAt(offset: number): number {
    return this.values[(this.head + offset) % this.values.length] as number;
  }
}

const STALL_MS = 3000;
