/**
 * Pure parsers of ffmpeg's listing options (`-version`, `-codecs`, `-filters`, `-formats`,
 * `-devices`, `-protocols`, `-hwaccels`) into the shape datarhei Core v16 answers on
 * `GET /api/v3/skills`. Each takes the option's stdout; lines it does not recognise are skipped, so
 * a banner or a new legend line from another ffmpeg version costs nothing. Every list is an array.
 */
import type {
  CodecLists,
  DeviceLists,
  FfmpegVersion,
  FormatLists,
  ProtocolLists,
  SkillsCodec,
  SkillsDevice,
  SkillsItem,
  SkillsLibrary,
} from './contract.js';

/** The version a UI rejects with its own message ("doesn't support the available FFmpeg binary"). */
export const UNKNOWN_VERSION = '0.0.0';

const VERSION_LINE = /^ffmpeg version n?(\d+)\.(\d+)(?:\.(\d+))?/m;
const COMPILER_LINE = /^\s*built with (.*)$/m;
const CONFIGURATION_LINE = /^\s*configuration: (.*)$/m;
const LIBRARY_LINE = /^\s*(lib[a-z]+)\s+(\d+\.\s*\d+\.\s*\d+) \/\s+(\d+\.\s*\d+\.\s*\d+)/gm;

/** `ffmpeg -version`: release builds give `major.minor[.patch]`; git builds (`N-…`) give `0.0.0`. */
export function parseVersion(text: string): FfmpegVersion {
  const version = VERSION_LINE.exec(text);
  const libraries: SkillsLibrary[] = [];
  for (const match of text.matchAll(LIBRARY_LINE)) {
    libraries.push({ name: match[1] ?? '', compiled: match[2] ?? '', linked: match[3] ?? '' });
  }
  return {
    version: version === null ? UNKNOWN_VERSION : `${version[1]}.${version[2]}.${version[3] ?? '0'}`,
    compiler: COMPILER_LINE.exec(text)?.[1]?.trim() ?? '',
    configuration: CONFIGURATION_LINE.exec(text)?.[1]?.trim() ?? '',
    libraries,
  };
}

// ` D.VI.S h264   H.264 / AVC … (decoders: h264 h264_v4l2m2m ) (encoders: libx264 )`
const CODEC_LINE = /^ ([D.])([E.])([VASDT])[I.][L.][S.] ([\w.-]+) +(.*)$/;
const CODER_LIST = /\((decoders|encoders): ([^)]*)\)/g;

/** `ffmpeg -codecs`: video, audio and subtitle codecs with their encoders and decoders. */
export function parseCodecs(text: string): CodecLists {
  const lists: CodecLists = { audio: [], video: [], subtitle: [] };
  for (const line of text.split('\n')) {
    const match = CODEC_LINE.exec(line.trimEnd());
    if (match === null) continue;
    const [, decode, encode, kind, id = '', rest = ''] = match;
    const named: Record<string, string[]> = {};
    for (const coders of rest.matchAll(CODER_LIST)) {
      named[coders[1] ?? ''] = (coders[2] ?? '').split(' ').filter((name) => name !== '');
    }
    const codec: SkillsCodec = {
      id,
      name: rest.replace(CODER_LIST, '').trim(),
      // Without a list the codec's own coder has the codec's name.
      encoders: encode === 'E' ? (named.encoders ?? [id]) : [],
      decoders: decode === 'D' ? (named.decoders ?? [id]) : [],
    };
    if (kind === 'V') lists.video.push(codec);
    else if (kind === 'A') lists.audio.push(codec);
    else if (kind === 'S') lists.subtitle.push(codec);
  }
  return lists;
}

// ` .S. scale   V->V   Scale the input video size …`
const FILTER_LINE = /^ [T.][S.][C.] (\w+) +\S+ +(.*)$/;

/** `ffmpeg -filters`. */
export function parseFilters(text: string): SkillsItem[] {
  const filters: SkillsItem[] = [];
  for (const line of text.split('\n')) {
    const match = FILTER_LINE.exec(line.trimEnd());
    if (match !== null) filters.push({ id: match[1] ?? '', name: (match[2] ?? '').trim() });
  }
  return filters;
}

// ` DE matroska,webm   Matroska / WebM`; the legend lines (` D. = …`) have a dot, not a space.
const FORMAT_LINE = /^ ([D ])([E ]) ([\w,]+)(?: +(.*))?$/;

/** `ffmpeg -formats` (and `-devices`, which lists the same way): the first alias is the id. */
export function parseFormats(text: string): FormatLists {
  const lists: FormatLists = { demuxers: [], muxers: [] };
  for (const line of text.split('\n')) {
    const match = FORMAT_LINE.exec(line.trimEnd());
    if (match === null) continue;
    const format = { id: (match[3] ?? '').split(',')[0] ?? '', name: (match[4] ?? '').trim() };
    if (match[1] === 'D') lists.demuxers.push(format);
    if (match[2] === 'E') lists.muxers.push({ ...format });
  }
  return lists;
}

/** `ffmpeg -devices`: the device types, each with an empty list of devices found. */
export function parseDevices(text: string): DeviceLists {
  const formats = parseFormats(text);
  const withDevices = (item: SkillsItem): SkillsDevice => ({ ...item, devices: [] });
  return { demuxers: formats.demuxers.map(withDevices), muxers: formats.muxers.map(withDevices) };
}

/** `ffmpeg -protocols`: the names under `Input:` and under `Output:`. */
export function parseProtocols(text: string): ProtocolLists {
  const lists: ProtocolLists = { input: [], output: [] };
  let section: SkillsItem[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === 'Input:') section = lists.input;
    else if (line === 'Output:') section = lists.output;
    else if (section !== undefined && /^\w+$/.test(line)) section.push({ id: line, name: line });
  }
  return lists;
}

/** `ffmpeg -hwaccels`: one name per line after the heading. */
export function parseHwaccels(text: string): SkillsItem[] {
  const accels: SkillsItem[] = [];
  let started = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === 'Hardware acceleration methods:') started = true;
    else if (started && /^\w+$/.test(line)) accels.push({ id: line, name: line });
  }
  return accels;
}
