/** Length of the sliding window of every bitrate (docs/sessions.md#the-contract), seconds. */
export const BITRATE_WINDOW_SEC = 10;

/**
 * Bytes per second over a sliding window of whole seconds, as a bitrate in bit/s. One bucket per
 * second in a ring; a bucket is cleared when the ring comes round to it again. While the window is
 * younger than its length, the average is over the time it has existed (at least one second), so
 * a new session does not start at a tenth of its rate.
 */
export class BitrateWindow {
  private readonly buckets = new Float64Array(BITRATE_WINDOW_SEC);
  /** The second (Unix) that `buckets[second % length]` currently holds. */
  private headSecond: number;
  private readonly startMs: number;

  constructor(nowMs: number) {
    this.startMs = nowMs;
    this.headSecond = Math.floor(nowMs / 1000);
  }

  add(bytes: number, nowMs: number): void {
    this.advance(Math.floor(nowMs / 1000));
    this.buckets[this.headSecond % BITRATE_WINDOW_SEC]! += bytes;
  }

  /** Average over the window ending now, bit/s. */
  bitrate(nowMs: number): number {
    this.advance(Math.floor(nowMs / 1000));
    let bytes = 0;
    for (const value of this.buckets) bytes += value;
    const ageSec = (nowMs - this.startMs) / 1000;
    const spanSec = Math.min(BITRATE_WINDOW_SEC, Math.max(1, ageSec));
    return (bytes * 8) / spanSec;
  }

  private advance(second: number): void {
    if (second <= this.headSecond) return;
    const steps = Math.min(second - this.headSecond, BITRATE_WINDOW_SEC);
    for (let i = 1; i <= steps; i++) this.buckets[(this.headSecond + i) % BITRATE_WINDOW_SEC] = 0;
    this.headSecond = second;
  }
}
