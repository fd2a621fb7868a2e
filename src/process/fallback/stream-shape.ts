/**
 * What the fallback must be encoded to so that the encoder can go on as if nothing changed: the
 * primary's picture size, frame rate and audio format, read from the `onMetaData` tag that
 * ffmpeg's FLV muxer writes first (its `width`, `height`, `framerate`, `audiosamplerate`,
 * `stereo`, `audiocodecid` fields).
 */
export interface StreamShape {
  width: number;
  height: number;
  fps: number;
  /** Undefined when the primary has no audio. */
  audio: { sampleRate: number; channels: number } | undefined;
}

/** The shape assumed before the primary was ever seen (a process that starts on its fallback). */
export const DEFAULT_SHAPE: StreamShape = {
  width: 1280,
  height: 720,
  fps: 25,
  audio: { sampleRate: 44100, channels: 2 },
};

/** The shape an `onMetaData` script tag body describes; undefined when it is not one or lacks a picture size. */
export function readStreamShape(body: Buffer): StreamShape | undefined {
  const fields = readMetaData(body);
  if (fields === undefined) return undefined;
  const width = fields.get('width');
  const height = fields.get('height');
  if (typeof width !== 'number' || typeof height !== 'number' || !(width > 0) || !(height > 0))
    return undefined;
  const fps = fields.get('framerate');
  const hasAudio = fields.has('audiocodecid');
  const sampleRate = fields.get('audiosamplerate');
  return {
    width: Math.round(width),
    height: Math.round(height),
    fps: typeof fps === 'number' && fps > 0 && fps <= 120 ? fps : DEFAULT_SHAPE.fps,
    audio: hasAudio
      ? {
          sampleRate: typeof sampleRate === 'number' && sampleRate > 0 ? sampleRate : 44100,
          channels: fields.get('stereo') === false ? 1 : 2,
        }
      : undefined,
  };
}

/**
 * The number, boolean and string fields of an AMF0 `onMetaData` (string, then ECMA array or
 * object); reading stops at the first value of another kind, which the fields above never follow.
 */
function readMetaData(body: Buffer): Map<string, number | boolean | string> | undefined {
  const fields = new Map<string, number | boolean | string>();
  let offset = 0;
  const string = (): string | undefined => {
    if (offset + 2 > body.length) return undefined;
    const length = body.readUInt16BE(offset);
    if (offset + 2 + length > body.length) return undefined;
    const text = body.toString('utf8', offset + 2, offset + 2 + length);
    offset += 2 + length;
    return text;
  };
  if (body[offset++] !== 0x02 || string() !== 'onMetaData') return undefined;
  const container = body[offset++];
  if (container === 0x08) offset += 4;
  else if (container !== 0x03) return undefined;
  for (;;) {
    const key = string();
    if (key === undefined || key === '') return fields;
    const marker = body[offset++];
    if (marker === 0x00 && offset + 8 <= body.length) {
      fields.set(key, body.readDoubleBE(offset));
      offset += 8;
    } else if (marker === 0x01 && offset < body.length) {
      fields.set(key, body[offset++] !== 0);
    } else if (marker === 0x02) {
      const text = string();
      if (text === undefined) return fields;
      fields.set(key, text);
    } else {
      return fields;
    }
  }
}
