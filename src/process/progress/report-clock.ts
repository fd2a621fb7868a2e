/**
 * The time at which ffmpeg made a report, in wall-clock milliseconds. The time a report arrives
 * is late by whatever kept the server's event loop busy (hundreds of ms on a loaded machine); two
 * such stamps one second apart gave a 25 fps source 35 fps. ffmpeg's own clock is in each report:
 * its `fps=` is frames divided by the seconds since it started encoding, so `frame / fps` is when
 * it reported, to within `frame` × 0.005 / `fps` (fps has two decimals). That is used while it is
 * precise (the first `preciseForMs`); after that, arrival times, where a late arrival costs a
 * rate over a full window only lag / window.
 */
export class ReportClock {
  /** Wall time of ffmpeg's start of encoding, estimated from the first report's arrival. */
  private originMs: number | undefined;
  private last = -Infinity;

  constructor(private readonly preciseForMs = 20_000) {}

  /** The stamp for a report of `frame` frames at ffmpeg's `fps`, arriving at `arrivalMs`. */
  stamp(arrivalMs: number, frame: number, fps: number): number {
    const elapsedMs = fps > 0 && frame > 0 ? (frame / fps) * 1000 : undefined;
    if (elapsedMs !== undefined && elapsedMs <= this.preciseForMs) {
      // Fixed at the first report: moving it later would stretch or squeeze one interval.
      this.originMs ??= arrivalMs - elapsedMs;
      return this.advance(this.originMs + elapsedMs);
    }
    return this.advance(arrivalMs);
  }

  /** Stamps never go back: a rate needs time to pass between two samples. */
  private advance(stampMs: number): number {
    this.last = Math.max(stampMs, this.last + 1);
    return this.last;
  }
}
