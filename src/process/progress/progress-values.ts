import type { PreludeStream } from '../ffmpeg/index.js';

/**
 * What is known about a running process's progress, in base units (bytes, bit/s, seconds). The
 * API shape (kB, kbit/s) is made from this in api-shapes.ts; the metrics collector reads it as is.
 */
export interface StreamValues {
  /** Id of the input or output in the process config. */
  id: string;
  /** Address of the input or output, credentials masked. */
  address: string;
  /** Index of the input or output file. */
  index: number;
  /** Index of the stream within the file. */
  stream: number;
  format: string;
  /** `video`, `audio`, … */
  type: string;
  codec: string;
  frame: number;
  /** Key frames (encoded video streams; 0 where ffmpeg does not tell). */
  keyframe: number;
  /** Frames per second over the sliding window. */
  fps: number;
  /** Lowest and highest `fps` seen during the run, and frames per second since its first report. */
  framerate: { min: number; max: number; avg: number };
  /**
   * Codec extradata, bytes. A stock ffmpeg does not report it (the reference reads it from its own
   * patched ffmpeg), so it stays 0; the field is there for clients that decode it.
   */
  extradataBytes: number;
  packet: number;
  /** Packets per second over the sliding window. */
  pps: number;
  sizeBytes: number;
  /** Bits per second over the sliding window. */
  bitrate: number;
  q: number;
  pixFmt?: string;
  width?: number;
  height?: number;
  samplingHz?: number;
  layout?: string;
  channels?: number;
}

export interface ProgressValues {
  inputs: StreamValues[];
  outputs: StreamValues[];
  frame: number;
  packet: number;
  fps: number;
  q: number;
  sizeBytes: number;
  timeSeconds: number;
  bitrate: number;
  speed: number;
  drop: number;
  dup: number;
}

export function emptyProgress(): ProgressValues {
  return {
    inputs: [],
    outputs: [],
    frame: 0,
    packet: 0,
    fps: 0,
    q: 0,
    sizeBytes: 0,
    timeSeconds: 0,
    bitrate: 0,
    speed: 0,
    drop: 0,
    dup: 0,
  };
}

/** A stream's values before any progress: what the prelude and the config (`label`) tell. */
export function emptyStream(
  stream: PreludeStream,
  label: { id: string; address: string } | undefined,
): StreamValues {
  const values: StreamValues = {
    id: label?.id ?? '',
    address: label?.address ?? '',
    index: stream.file,
    stream: stream.stream,
    format: stream.format,
    type: stream.type,
    codec: stream.codec,
    frame: 0,
    keyframe: 0,
    fps: 0,
    framerate: { min: 0, max: 0, avg: 0 },
    extradataBytes: 0,
    packet: 0,
    pps: 0,
    sizeBytes: 0,
    bitrate: 0,
    q: 0,
  };
  if (stream.pixFmt !== undefined) values.pixFmt = stream.pixFmt;
  if (stream.width !== undefined) values.width = stream.width;
  if (stream.height !== undefined) values.height = stream.height;
  if (stream.samplingHz !== undefined) values.samplingHz = stream.samplingHz;
  if (stream.layout !== undefined) values.layout = stream.layout;
  if (stream.channels !== undefined) values.channels = stream.channels;
  return values;
}

/** The values of a run that ended: counters and sizes kept, every rate at 0. */
export function atRest(values: ProgressValues): ProgressValues {
  const rest = (stream: StreamValues): StreamValues => ({ ...stream, fps: 0, pps: 0, bitrate: 0 });
  return {
    ...values,
    inputs: values.inputs.map(rest),
    outputs: values.outputs.map(rest),
    fps: 0,
    bitrate: 0,
    speed: 0,
  };
}
