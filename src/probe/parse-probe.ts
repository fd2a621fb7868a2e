/**
 * Pure parser of what ffmpeg prints about its inputs (`Input #…`, `Duration:`, `Stream #…`) into
 * the streams of datarhei Core v16's probe answer (`api.ProbeIO`). Lines it does not know are
 * skipped; output sections are ignored (a probe has no outputs).
 */
import type { ProbeStream } from './contract.js';

const HEADER = /^(Input|Output) #(\d+), (.*?), (?:from|to) '(.*)':?$/;
const DURATION = /^\s*Duration: (\d+):(\d+):(\d+)\.(\d+)/;
const STREAM =
  /^\s*Stream #(\d+):(\d+)(?:\[[0-9a-fx]+\])?(?:\(([a-z]+)\))?: (Video|Audio|Subtitle|Data): (.*)$/;
const CODEC = /^([^\s,]+)/;
const PIXFMT_SIZE = /, ([0-9A-Za-z_]+)(?:\([^)]*\))?, (\d+)x(\d+)/;
const FPS = /, (\d+(?:\.\d+)?) fps/;
/** Without an `fps` figure (raw lavfi sources) the frame rate is the `tbr`. */
const TBR = /, (\d+(?:\.\d+)?)k? tbr/;
const AUDIO = /, (\d+) Hz, ([^,]+)/;
const BITRATE = /, (\d+) kb\/s/;
/** Channels of the layouts ffmpeg names (libavutil/channel_layout.c), for the common ones. */
const LAYOUT_CHANNELS: Record<string, number> = {
  mono: 1,
  stereo: 2,
  '2.1': 3,
  '3.0': 3,
  quad: 4,
  '4.0': 4,
  '5.0': 5,
  '5.0(side)': 5,
  '5.1': 6,
  '5.1(side)': 6,
  '6.1': 7,
  '7.1': 8,
};

export function parseProbe(lines: readonly string[]): ProbeStream[] {
  const streams: ProbeStream[] = [];
  let input: { format: string; url: string; duration: number } | undefined;
  for (const line of lines) {
    const header = HEADER.exec(line);
    if (header !== null) {
      input =
        header[1] === 'Input' ? { format: header[3] ?? '', url: header[4] ?? '', duration: 0 } : undefined;
      continue;
    }
    if (input === undefined) continue;
    const duration = DURATION.exec(line);
    if (duration !== null) {
      const [, hours, minutes, seconds, fraction = '0'] = duration;
      input.duration =
        Number(hours) * 3600 +
        Number(minutes) * 60 +
        Number(seconds) +
        Number(fraction) / 10 ** fraction.length;
      continue;
    }
    const stream = STREAM.exec(line);
    if (stream !== null) streams.push(parseStream(input, stream));
  }
  return streams;
}

function parseStream(
  input: { format: string; url: string; duration: number },
  match: RegExpExecArray,
): ProbeStream {
  const [, index, number, language, kind = '', detail = ''] = match;
  const type = kind.toLowerCase();
  const result: ProbeStream = {
    url: input.url,
    format: input.format,
    index: Number(index),
    stream: Number(number),
    language: language?.length === 3 ? language : 'und',
    type,
    codec: CODEC.exec(detail)?.[1] ?? '',
    coder: '',
    bitrate_kbps: Number(BITRATE.exec(detail)?.[1] ?? 0),
    duration_sec: input.duration,
    fps: 0,
    pix_fmt: '',
    width: 0,
    height: 0,
    sampling_hz: 0,
    layout: '',
    channels: 0,
  };
  if (type === 'video') {
    const size = PIXFMT_SIZE.exec(detail);
    if (size !== null) {
      result.pix_fmt = size[1] ?? '';
      result.width = Number(size[2]);
      result.height = Number(size[3]);
    }
    result.fps = Number(FPS.exec(detail)?.[1] ?? TBR.exec(detail)?.[1] ?? 0);
  } else if (type === 'audio') {
    const audio = AUDIO.exec(detail);
    if (audio !== null) {
      result.sampling_hz = Number(audio[1]);
      result.layout = (audio[2] ?? '').trim();
      result.channels =
        LAYOUT_CHANNELS[result.layout] ?? Number(/^(\d+) channels/.exec(result.layout)?.[1] ?? 0);
    }
  }
  return result;
}
