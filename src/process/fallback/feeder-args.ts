import type { StreamShape } from './stream-shape.js';

/** The options of one feeder ffmpeg before its own; quiet except for errors, never interactive. */
const QUIET = ['-hide_banner', '-nostdin', '-loglevel', 'error'];
/** FLV to the server's pipe. */
const TO_RELAY = ['-f', 'flv', 'pipe:1'];

/**
 * An RTMP source announces its streams (`onMetaData`, sequence headers) before its first frame:
 * ffmpeg need not analyse a second of it before it copies (the first frame comes after about
 * 0.4 s instead of 1.2 s), which shortens every switch-back. Other formats (MPEG-TS over SRT)
 * need the analysis to find their codec parameters. The input's own options come after, and win.
 */
const RTMP = /^rtmpt?[es]?:\/\//i;
const FAST_START = ['-analyzeduration', '0', '-probesize', '32'];

/**
 * The primary's feeder: reads the input as the user's command would have (its options, its
 * address) and hands its streams on unchanged (docs/processes.md#fallback-sources).
 */
export function primaryFeederArgs(address: string, options: readonly string[]): string[] {
  const start = RTMP.test(address) ? FAST_START : [];
  return [
    ...QUIET,
    ...start,
    ...options,
    '-i',
    address,
    '-map',
    '0:v:0?',
    '-map',
    '0:a:0?',
    '-c',
    'copy',
    ...TO_RELAY,
  ];
}

/** What kind of source a fallback address names: a still image, a media file to loop, or a live source. */
export type FallbackKind = 'image' | 'file' | 'live';

const IMAGE = /\.(png|jpe?g|bmp|gif|webp|tiff?)$/i;
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

export function fallbackKind(address: string): FallbackKind {
  const path = address.startsWith('file:') ? address.slice('file:'.length) : address;
  if (path !== address || !URL_SCHEME.test(address)) return IMAGE.test(path) ? 'image' : 'file';
  return 'live';
}

/**
 * The fallback's feeder: the fallback encoded to the primary's shape (H.264 and AAC, its picture
 * size, frame rate and audio format, a keyframe every second), in real time. An image is shown
 * with silence; a file is looped; a live source is read as it comes.
 */
export function fallbackFeederArgs(
  address: string,
  options: readonly string[],
  shape: StreamShape,
): string[] {
  const kind = fallbackKind(address);
  const fps = String(shape.fps);
  const { width, height } = shape;
  const input =
    kind === 'image'
      ? ['-re', '-loop', '1', '-framerate', fps, ...options, '-i', address]
      : kind === 'file'
        ? ['-re', '-stream_loop', '-1', ...options, '-i', address]
        : [...options, '-i', address];
  const audio = shape.audio;
  const silence =
    kind === 'image' && audio !== undefined
      ? [
          '-re',
          '-f',
          'lavfi',
          '-i',
          `anullsrc=r=${audio.sampleRate}:cl=${audio.channels === 1 ? 'mono' : 'stereo'}`,
        ]
      : [];
  const maps =
    audio === undefined
      ? ['-map', '0:v:0', '-an']
      : kind === 'image'
        ? ['-map', '0:v:0', '-map', '1:a:0']
        : ['-map', '0:v:0', '-map', '0:a:0?'];
  const audioCodec =
    audio === undefined
      ? []
      : ['-c:a', 'aac', '-ar', String(audio.sampleRate), '-ac', String(audio.channels)];
  return [
    ...QUIET,
    ...input,
    ...silence,
    ...maps,
    '-vf',
    `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:-1:-1,setsar=1,format=yuv420p`,
    '-r',
    fps,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-g',
    String(Math.max(1, Math.round(shape.fps))),
    ...audioCodec,
    ...TO_RELAY,
  ];
}
