import type { Prelude, ProgressBlock, StatsLine, VstatsLine } from '../ffmpeg/index.js';
import { emptyProgress, emptyStream, type ProgressValues, type StreamValues } from './progress-values.js';
import { ProgressRates } from './progress-rates.js';
import { ReportClock } from './report-clock.js';

/** Config id and masked address of each input or output file, by file index. */
export interface IoLabels {
  inputs: { id: string; address: string }[];
  outputs: { id: string; address: string }[];
}

interface StreamCounters {
  frames: number;
  keyframes: number;
  bytes: number;
  q: number;
}

/**
 * Turns what one ffmpeg run tells (prelude, classic progress lines, the `-progress` stream, the
 * `-vstats` stream) and what the server sees itself (bytes an output wrote into the memory
 * filesystem) into progress values per process and per stream.
 *
 * Where each per-stream value comes from (stock ffmpeg reports no per-stream counters in its
 * progress, so they are assembled; see docs/processes.md):
 * - video output streams that ffmpeg encodes: frames, bytes and q from `-vstats` (one line per
 *   encoded packet); the first video output stream also from the `frame=` counter;
 * - an output file's bytes: what it wrote through the server (memfs), else ffmpeg's own size for
 *   the first output file; a file's only stream gets all of them, and its one non-video stream
 *   gets what the (encoded) video streams of that file did not write;
 * - input streams: the frames and packets of the output streams they feed; an input file's bytes
 *   are what it read from memfs through the server, all of them on its stream when it has only one.
 * Rates (fps, pps, bitrate) come from sliding windows over these counters, sampled when ffmpeg
 * reports (a `-progress` block or a progress line, about once per second) and stamped with the
 * time ffmpeg made it (report-clock.ts). Sampling on a timer of its own instead mixed two clocks: a counter that
 * ffmpeg updates once per second, read at arbitrary moments, made a 25 fps source read 0 and then
 * about 30 in its first seconds. The process's frame rate follows ffmpeg's own `frame=` counter;
 * `-vstats` (written through a stdio buffer, so in bursts) only fills the other streams.
 *
 * The rate windows themselves live in progress-rates.ts; the counters and the samples of their
 * rates are taken from the same assembly (`counters`), which stays here in one piece so a stream's
 * count and its rate agree. Keeping the last values (`values`) stays here too: it must know every
 * change of the state they are made from (`version`).
 */
export class ProgressTracker {
  private prelude: Prelude = { inputs: [], outputs: [], mapping: [] };
  private frame = 0;
  private timeSeconds = 0;
  private speed = 0;
  private drop = 0;
  private dup = 0;
  /** Bytes ffmpeg reports for the first output file. */
  private ffmpegBytes = 0;
  private qByOrder: number[] = [];
  private readonly qByStream = new Map<string, number>();
  private readonly vstats = new Map<string, StreamCounters>();
  /** Bytes per output file seen by the server itself. */
  private readonly serverBytes = new Map<number, number>();
  /** Bytes per input file read from memfs through the server. */
  private readonly inputBytes = new Map<number, number>();
  private sawProgressStream = false;
  private readonly rates: ProgressRates;
  /** ffmpeg's own `fps=` of its last report, until two reports give a measured rate. */
  private reportedFps = 0;
  private readonly clock = new ReportClock();
  /** Counts the changes of what `values` is computed from (everything but the clock). */
  private version = 0;
  /** The last `values`, and the times from which to which it stays what `values` would compute. */
  private last: { version: number; fromMs: number; untilMs: number; values: ProgressValues } | undefined;

  /**
   * @param now wall clock, milliseconds: stamps each report as it arrives
   * @param windowMs length of the rate windows, milliseconds
   */
  constructor(
    private readonly labels: IoLabels,
    private readonly now: () => number = Date.now,
    windowMs = 10_000,
  ) {
    this.rates = new ProgressRates(windowMs);
  }

  setPrelude(prelude: Prelude): void {
    this.version++;
    this.prelude = prelude;
    this.rates.setPrelude(prelude);
  }

  /** A classic progress line; returns true when it shows progress. */
  onStatsLine(line: StatsLine): boolean {
    this.version++;
    // The `-progress` stream carries the same figures with more precision (bytes, microseconds).
    if (this.sawProgressStream) return false;
    const before = this.fingerprint();
    if (line.frame !== undefined) this.frame = line.frame;
    if (line.timeSeconds !== undefined) this.timeSeconds = Math.max(0, line.timeSeconds);
    if (line.sizeBytes !== undefined) this.ffmpegBytes = line.sizeBytes;
    if (line.speed !== undefined) this.speed = line.speed;
    if (line.drop !== undefined) this.drop = line.drop;
    if (line.dup !== undefined) this.dup = line.dup;
    if (line.q.length > 0) this.qByOrder = line.q;
    if (line.fps !== undefined) this.reportedFps = line.fps;
    this.record(this.now());
    return this.fingerprint() !== before;
  }

  /** A block of the `-progress` stream; returns true when it shows progress. */
  onProgressBlock(block: ProgressBlock): boolean {
    this.version++;
    this.sawProgressStream = true;
    const before = this.fingerprint();
    if (block.frame !== undefined) this.frame = block.frame;
    if (block.outTimeSeconds !== undefined) this.timeSeconds = Math.max(0, block.outTimeSeconds);
    if (block.totalSizeBytes !== undefined) this.ffmpegBytes = block.totalSizeBytes;
    if (block.speed !== undefined) this.speed = block.speed;
    if (block.drop !== undefined) this.drop = block.drop;
    if (block.dup !== undefined) this.dup = block.dup;
    for (const [key, q] of block.streamQ) this.qByStream.set(key, q);
    if (block.fps !== undefined) this.reportedFps = block.fps;
    this.record(this.now());
    return this.fingerprint() !== before;
  }

  /** A `-vstats` line (one encoded video packet); returns true (it is progress). */
  onVstats(line: VstatsLine): boolean {
    this.version++;
    const key = `${line.file}:${line.stream}`;
    const counters = this.vstats.get(key) ?? { frames: 0, keyframes: 0, bytes: 0, q: 0 };
    counters.frames++;
    if (line.keyframe) counters.keyframes++;
    counters.bytes += line.frameBytes;
    counters.q = line.q;
    this.vstats.set(key, counters);
    return true;
  }

  /** Bytes the output file `index` wrote through the server. */
  addOutputBytes(index: number, bytes: number): void {
    this.version++;
    this.serverBytes.set(index, (this.serverBytes.get(index) ?? 0) + bytes);
  }

  /** Bytes the input file `index` read from memfs through the server. */
  addInputBytes(index: number, bytes: number): void {
    this.version++;
    this.inputBytes.set(index, (this.inputBytes.get(index) ?? 0) + bytes);
  }

  /**
   * Feeds the rate windows with the counters as ffmpeg reported them. ffmpeg prints its first
   * report at its first frame, before its regular period and without a clock (`fps=0`); taken as
   * a sample, the frames right after it made a 25 fps source read about 30 for several seconds.
   * The windows start at the first report that carries ffmpeg's clock.
   */
  private record(arrivalMs: number): void {
    if (this.frame > 0 && this.reportedFps === 0) return;
    const nowMs = this.clock.stamp(arrivalMs, this.frame, this.reportedFps);
    this.rates.sample(nowMs, this.counters(true));
  }

  /**
   * Current values, with rates over the window ending at `nowMs`. The object is shared by the
   * callers until something changes (not to be modified): the API's process list and the metrics
   * collection ask for the values of every process, far more often than ffmpeg reports (about once
   * per second). Kept only while computing anew would give the same values, and change nothing:
   * no report since, no sample leaving a window, no window stalling (RateWindow.stableUntil).
   */
  values(nowMs: number): ProgressValues {
    const last = this.last;
    if (
      last !== undefined &&
      last.version === this.version &&
      nowMs >= last.fromMs &&
      nowMs <= last.untilMs
    ) {
      return last.values;
    }
    const frameSamples = this.rates.frameSamples();
    const values = this.computeValues(nowMs);
    // The process's fps reads how many samples its window held before this call dropped the
    // old ones: after a drop, the next call may read differently at the very same time.
    const untilMs = this.rates.frameSamples() === frameSamples ? this.rates.stableUntil(nowMs) : -Infinity;
    this.last = { version: this.version, fromMs: nowMs, untilMs, values };
    return values;
  }

  /** `values` computed anew, whatever was kept (the straightforward path, which tests compare). */
  computeValues(nowMs: number): ProgressValues {
    const values = this.counters(false);
    this.rates.fill(values, nowMs, this.reportedFps);
    return values;
  }

  /**
   * The counters now. `asReported`: the first video output stream counts ffmpeg's `frame=` alone
   * (the rates' samples), not `-vstats` lines that arrived since the report.
   */
  private counters(asReported: boolean): ProgressValues {
    const values = emptyProgress();
    values.timeSeconds = this.timeSeconds;
    values.speed = this.speed;
    values.drop = this.drop;
    values.dup = this.dup;
    values.outputs = this.outputCounters(asReported);
    values.inputs = this.inputCounters(values.outputs);
    const firstVideo = values.outputs.find((stream) => stream.type === 'video');
    // ffmpeg's own `frame=` counts the first video output stream too, but only once per second;
    // that stream's count also follows -vstats, so the process and the stream never disagree.
    values.frame = firstVideo?.frame ?? this.frame;
    if (asReported && this.frame > 0) values.frame = this.frame;
    values.q = firstVideo?.q ?? this.qByOrder[0] ?? 0;
    // The packets of the output streams whose counts are known (see outputCounters).
    values.packet = values.outputs.reduce((sum, stream) => sum + stream.packet, 0);
    const files = new Set(this.prelude.outputs.map((stream) => stream.file));
    for (const index of this.serverBytes.keys()) files.add(index);
    if (files.size === 0) files.add(0);
    values.sizeBytes = [...files].reduce((sum, file) => sum + this.outputBytes(file), 0);
    return values;
  }

  private outputBytes(file: number): number {
    const server = this.serverBytes.get(file) ?? 0;
    if (server > 0) return server;
    return file === 0 ? this.ffmpegBytes : 0;
  }

  private outputCounters(asReported: boolean): StreamValues[] {
    const outputs = this.prelude.outputs;
    const firstVideo = outputs.find((stream) => stream.type === 'video');
    let videoOrder = 0;
    const result = outputs.map((stream) => {
      const key = `${stream.file}:${stream.stream}`;
      const encoded = this.vstats.get(key);
      const values = emptyStream(stream, this.labels.outputs[stream.file]);
      if (stream.type === 'video') {
        const counted = stream === firstVideo ? this.frame : 0;
        values.frame = asReported && counted > 0 ? counted : Math.max(encoded?.frames ?? 0, counted);
        values.keyframe = encoded?.keyframes ?? 0;
        values.packet = values.frame;
        values.sizeBytes = encoded?.bytes ?? 0;
        values.q = this.qByStream.get(key) ?? this.qByOrder[videoOrder] ?? encoded?.q ?? 0;
        videoOrder++;
      }
      return values;
    });
    this.assignFileBytes(result);
    return result;
  }

  /** Splits each output file's bytes over its streams where that is unambiguous. */
  private assignFileBytes(streams: StreamValues[]): void {
    const byFile = new Map<number, StreamValues[]>();
    for (const stream of streams) byFile.set(stream.index, [...(byFile.get(stream.index) ?? []), stream]);
    for (const [file, inFile] of byFile) {
      const total = this.outputBytes(file);
      if (total === 0) continue;
      if (inFile.length === 1) {
        (inFile[0] as StreamValues).sizeBytes = total;
        continue;
      }
      const video = inFile.filter((stream) => stream.type === 'video');
      const other = inFile.filter((stream) => stream.type !== 'video');
      const videoKnown = video.every((stream) => this.vstats.has(`${stream.index}:${stream.stream}`));
      if (other.length === 1 && videoKnown) {
        const videoBytes = video.reduce((sum, stream) => sum + stream.sizeBytes, 0);
        (other[0] as StreamValues).sizeBytes = Math.max(0, total - videoBytes);
      }
    }
  }

  private inputCounters(outputs: StreamValues[]): StreamValues[] {
    const streamsOfFile = new Map<number, number>();
    for (const stream of this.prelude.inputs)
      streamsOfFile.set(stream.file, (streamsOfFile.get(stream.file) ?? 0) + 1);
    return this.prelude.inputs.map((stream) => {
      const values = emptyStream(stream, this.labels.inputs[stream.file]);
      for (const map of this.prelude.mapping) {
        if (!map.inputs.some((input) => input.file === stream.file && input.stream === stream.stream))
          continue;
        const output = outputs.find(
          (candidate) => candidate.index === map.output.file && candidate.stream === map.output.stream,
        );
        if (output === undefined) continue;
        values.frame = Math.max(values.frame, output.frame);
        values.keyframe = Math.max(values.keyframe, output.keyframe);
        values.packet = Math.max(values.packet, output.packet);
      }
      // A file's bytes cannot be split over several streams (the server sees only file reads).
      if (streamsOfFile.get(stream.file) === 1) values.sizeBytes = this.inputBytes.get(stream.file) ?? 0;
      return values;
    });
  }

  private fingerprint(): string {
    return `${this.frame}/${this.timeSeconds}/${this.ffmpegBytes}`;
  }
}
