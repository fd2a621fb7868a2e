import type { RateWindow } from './rate-window.js';

/**
 * What a frame counter's rate did over a run (the reference's `framerate` of a progress stream):
 * the lowest and highest rate its window showed, and frames per second from the first sample to
 * the latest.
 */
export class FramerateRange {
  private min = Infinity;
  private max = 0;

  /** @param first the first sample of the counter: time (ms) and value */
  constructor(private readonly first: { ms: number; value: number }) {}

  /** Takes the window's rate after a new sample (the second sample on gives one). */
  widen(rate: number): void {
    this.min = Math.min(this.min, rate);
    this.max = Math.max(this.max, rate);
  }

  /** All 0 until a rate was seen. */
  values(window: RateWindow): { min: number; max: number; avg: number } {
    if (this.min === Infinity) return { min: 0, max: 0, avg: 0 };
    const seconds = (window.lastTime() - this.first.ms) / 1000;
    const avg = seconds > 0 ? (window.lastValue() - this.first.value) / seconds : 0;
    return { min: this.min, max: this.max, avg: Math.max(0, avg) };
  }
}
