import type { Prelude } from '../ffmpeg/index.js';
import { FramerateRange } from './framerate-range.js';
import type { ProgressValues } from './progress-values.js';
import { RateWindow } from './rate-window.js';

const NO_FRAMERATE = { min: 0, max: 0, avg: 0 };

/** The rate windows of one input or output stream, and the range of its frame rate. */
interface StreamWindows {
  frame: RateWindow;
  packet: RateWindow;
  size: RateWindow;
  /** Made at the stream's first sample. */
  range: FramerateRange | undefined;
}

/**
 * The rates (fps, pps, bitrate) of one ffmpeg run: sliding windows over the counters the progress
 * tracker assembles, for the process and for each stream of its prelude. The tracker samples its
 * counters here when ffmpeg reports and reads the rates back into the values it answers with.
 */
export class ProgressRates {
  private readonly frameWindow: RateWindow;
  private readonly sizeWindow: RateWindow;
  /** Per stream, by `in|out:<file>:<stream>`: streams of the same key share their windows. */
  private readonly streamWindows = new Map<string, StreamWindows>();
  private prelude: Prelude = { inputs: [], outputs: [], mapping: [] };
  /**
   * The windows of `prelude.inputs` and `prelude.outputs`, position by position, looked up once
   * per prelude: rates are read on every API request and collection tick, for every process.
   */
  private slots: { inputs: StreamWindows[]; outputs: StreamWindows[] } | undefined;

  /** @param windowMs length of the rate windows, milliseconds */
  constructor(private readonly windowMs: number) {
    this.frameWindow = new RateWindow(windowMs);
    this.sizeWindow = new RateWindow(windowMs);
  }

  /** The streams whose windows `sample` and `fill` use, position by position, from now on. */
  setPrelude(prelude: Prelude): void {
    this.prelude = prelude;
    this.slots = undefined;
  }

  /** Pushes the counters of `values` (the prelude's streams, in order) as a sample at `nowMs`. */
  sample(nowMs: number, values: ProgressValues): void {
    this.frameWindow.push(nowMs, values.frame);
    this.sizeWindow.push(nowMs, values.sizeBytes);
    this.eachStream(values, (stream, slot) => {
      slot.frame.push(nowMs, stream.frame);
      slot.packet.push(nowMs, stream.packet);
      slot.size.push(nowMs, stream.sizeBytes);
      // Keeps the lowest and highest rate of the frame counter, once two samples give one.
      if (slot.range === undefined) slot.range = new FramerateRange({ ms: nowMs, value: stream.frame });
      else slot.range.widen(slot.frame.rate(nowMs));
    });
  }

  /**
   * Sets the rates of `values` over the windows ending at `nowMs`; the process's fps is
   * `reportedFps` until two samples give a measured one.
   */
  fill(values: ProgressValues, nowMs: number, reportedFps: number): void {
    const frames = this.frameWindow;
    values.fps = frames.samples() < 2 ? reportedFps : frames.rate(nowMs);
    values.bitrate = this.sizeWindow.rate(nowMs) * 8;
    this.eachStream(values, (stream, slot) => {
      stream.fps = slot.frame.rate(nowMs);
      stream.framerate = slot.range?.values(slot.frame) ?? NO_FRAMERATE;
      stream.pps = slot.packet.rate(nowMs);
      stream.bitrate = slot.size.rate(nowMs) * 8;
    });
  }

  /** How many samples the process's frame window holds (`fill` drops the old ones). */
  frameSamples(): number {
    return this.frameWindow.samples();
  }

  /** Until when (ms) every rate window gives the rates it gives at `nowMs`. */
  stableUntil(nowMs: number): number {
    let until = Math.min(this.frameWindow.stableUntil(nowMs), this.sizeWindow.stableUntil(nowMs));
    for (const windows of this.streamWindows.values()) {
      until = Math.min(
        until,
        windows.frame.stableUntil(nowMs),
        windows.packet.stableUntil(nowMs),
        windows.size.stableUntil(nowMs),
      );
    }
    return until;
  }

  /** Calls `use` with each input and then each output stream of `values` and its windows. */
  private eachStream(
    values: ProgressValues,
    use: (stream: ProgressValues['inputs'][number], slot: StreamWindows) => void,
  ): void {
    const slots = this.streamSlots();
    values.inputs.forEach((stream, position) => use(stream, slots.inputs[position] as StreamWindows));
    values.outputs.forEach((stream, position) => use(stream, slots.outputs[position] as StreamWindows));
  }

  /** The windows of the prelude's streams, in the order of the tracker's inputs and outputs. */
  private streamSlots(): { inputs: StreamWindows[]; outputs: StreamWindows[] } {
    this.slots ??= {
      inputs: this.prelude.inputs.map((stream) => this.windowsOf(`in:${stream.file}:${stream.stream}`)),
      outputs: this.prelude.outputs.map((stream) => this.windowsOf(`out:${stream.file}:${stream.stream}`)),
    };
    return this.slots;
  }

  private windowsOf(key: string): StreamWindows {
    let windows = this.streamWindows.get(key);
    if (windows === undefined) {
      windows = {
        frame: new RateWindow(this.windowMs),
        packet: new RateWindow(this.windowMs),
        size: new RateWindow(this.windowMs),
        range: undefined,
      };
      this.streamWindows.set(key, windows);
    }
    return windows;
  }
}
