import { stripLogPrefixes } from './log-line.js';

/** One stream of an input or output file as ffmpeg describes it before it starts. */
export interface PreludeStream {
  /** Index of the input or output file (`#<file>:<stream>`). */
  file: number;
  /** Index of the stream within the file. */
  stream: number;
  /** Format (demuxer or muxer) of the file, e.g. `lavfi`, `hls`. */
  format: string;
  /** Address of the file as ffmpeg printed it. */
  address: string;
  /** `video`, `audio`, `subtitle`, `data`, … */
  type: string;
  codec: string;
  pixFmt?: string;
  width?: number;
  height?: number;
  /** Frames per second announced for the stream. */
  fps?: number;
  samplingHz?: number;
  layout?: string;
  channels?: number;
}

/** Where an output stream takes its data from (`Stream mapping:`). */
export interface StreamMapping {
  /** Output stream `file:stream`. */
  output: { file: number; stream: number };
  /** Input streams feeding it (several when it comes out of a complex filter graph). */
  inputs: { file: number; stream: number }[];
  /** Stream copy (`(copy)`): packets pass through without decoding. */
  copy: boolean;
}

export interface Prelude {
  inputs: PreludeStream[];
  outputs: PreludeStream[];
  mapping: StreamMapping[];
}

const FILE_HEADER = /^(Input|Output) #(\d+), (.+?), (?:from|to) '(.*)':$/;
/**
 * `Stream #0:1[0x101](eng): Audio: …`; at `-loglevel debug` ffmpeg adds the probed frame count and
 * the time base before the colon (`Stream #0:0, 1, 1/10: Video: …`, libavformat/dump.c).
 */
const STREAM = /^Stream #(\d+):(\d+)(?:\[[^\]]*\])?(?:\([^)]*\))?(?:, \d+, -?\d+\/\d+)?: ([A-Za-z]+): (.*)$/;
/** `1 reference frame`, printed after the codec at `-loglevel verbose` and above. */
const REFERENCE_FRAMES = /^\d+ reference frames?\b/;
const SIMPLE_MAP = /^Stream #(\d+):(\d+) -> #(\d+):(\d+)(.*)$/;
const GRAPH_IN = /^Stream #(\d+):(\d+) \([^)]*\) -> \S+(?: \(graph (\d+)\))?$/;
const GRAPH_OUT = /^\S+(?: \(graph (\d+)\))? -> Stream #(\d+):(\d+) \([^)]*\)$/;

/**
 * Reads the prelude of an ffmpeg run line by line: the `Input #`/`Output #` headers, their
 * `Stream #` lines and the `Stream mapping:` section, in whatever order ffmpeg prints them (an
 * output header may come after the mapping, once its encoder is open).
 */
export class PreludeParser {
  private section: { kind: 'Input' | 'Output'; file: number; format: string; address: string } | undefined;
  private inMapping = false;
  private readonly inputs: PreludeStream[] = [];
  private readonly outputs: PreludeStream[] = [];
  private readonly simple: StreamMapping[] = [];
  private readonly graphInputs: { graph: number; file: number; stream: number }[] = [];
  private readonly graphOutputs: { graph: number; file: number; stream: number }[] = [];

  /** Feeds one log line; returns true when the line belonged to the prelude. */
  push(raw: string): boolean {
    const text = stripLogPrefixes(raw);
    const line = text.trim();
    const header = FILE_HEADER.exec(line);
    if (header !== null) {
      this.inMapping = false;
      this.section = {
        kind: header[1] as 'Input' | 'Output',
        file: Number(header[2]),
        format: header[3] as string,
        address: header[4] as string,
      };
      return true;
    }
    if (line === 'Stream mapping:') {
      this.inMapping = true;
      this.section = undefined;
      return true;
    }
    if (this.inMapping && text.startsWith('  ') && this.pushMapping(line)) return true;
    this.inMapping = false;
    if (this.section !== undefined && text.startsWith(' ')) {
      const stream = STREAM.exec(line);
      if (stream !== null) {
        const parsed = parseStream(this.section, Number(stream[2]), stream[3] as string, stream[4] as string);
        (this.section.kind === 'Input' ? this.inputs : this.outputs).push(parsed);
      }
      return true;
    }
    this.section = undefined;
    return false;
  }

  result(): Prelude {
    const mapping = [...this.simple];
    for (const output of this.graphOutputs) {
      mapping.push({
        output: { file: output.file, stream: output.stream },
        inputs: this.graphInputs
          .filter((input) => input.graph === output.graph)
          .map(({ file, stream }) => ({ file, stream })),
        copy: false,
      });
    }
    const order = (a: { file: number; stream: number }, b: { file: number; stream: number }): number =>
      a.file - b.file || a.stream - b.stream;
    mapping.sort((a, b) => order(a.output, b.output));
    return { inputs: [...this.inputs].sort(order), outputs: [...this.outputs].sort(order), mapping };
  }

  private pushMapping(line: string): boolean {
    const simple = SIMPLE_MAP.exec(line);
    if (simple !== null) {
      this.simple.push({
        inputs: [{ file: Number(simple[1]), stream: Number(simple[2]) }],
        output: { file: Number(simple[3]), stream: Number(simple[4]) },
        copy: (simple[5] as string).includes('(copy)'),
      });
      return true;
    }
    const graphIn = GRAPH_IN.exec(line);
    if (graphIn !== null) {
      this.graphInputs.push({
        graph: Number(graphIn[3] ?? 0),
        file: Number(graphIn[1]),
        stream: Number(graphIn[2]),
      });
      return true;
    }
    const graphOut = GRAPH_OUT.exec(line);
    if (graphOut !== null) {
      this.graphOutputs.push({
        graph: Number(graphOut[1] ?? 0),
        file: Number(graphOut[2]),
        stream: Number(graphOut[3]),
      });
      return true;
    }
    return line.startsWith('File ');
  }
}

function parseStream(
  file: { file: number; format: string; address: string },
  stream: number,
  kind: string,
  details: string,
): PreludeStream {
  const parts = splitTopLevel(details).filter((part, index) => index === 0 || !REFERENCE_FRAMES.test(part));
  const result: PreludeStream = {
    file: file.file,
    stream,
    format: file.format,
    address: file.address,
    type: kind.toLowerCase(),
    codec: firstWord(parts[0] ?? ''),
  };
  if (result.type === 'video') {
    const pixFmt = firstWord((parts[1] ?? '').replace(/\(.*$/, ''));
    if (pixFmt !== '' && !/^\d+x\d+/.test(pixFmt)) result.pixFmt = pixFmt;
    for (const part of parts) {
      const size = /^(\d+)x(\d+)\b/.exec(part);
      if (size !== null && result.width === undefined) {
        result.width = Number(size[1]);
        result.height = Number(size[2]);
      }
      const fps = /^([\d.]+)(k?) (fps|tbr)\b/.exec(part);
      if (fps !== null && (result.fps === undefined || fps[3] === 'fps')) {
        result.fps = Number(fps[1]) * (fps[2] === 'k' ? 1000 : 1);
      }
    }
  } else if (result.type === 'audio') {
    const hzIndex = parts.findIndex((part) => /^\d+ Hz$/.test(part));
    if (hzIndex !== -1) {
      result.samplingHz = Number.parseInt(parts[hzIndex] as string, 10);
      const layout = parts[hzIndex + 1];
      if (layout !== undefined) {
        result.layout = layout;
        result.channels = channelsOf(layout);
      }
    }
  }
  return result;
}

/** Splits at commas that are not inside parentheses or brackets. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of text) {
    if (char === '(' || char === '[') depth++;
    else if ((char === ')' || char === ']') && depth > 0) depth--;
    if (char === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  if (current.trim() !== '') parts.push(current.trim());
  return parts;
}

function firstWord(text: string): string {
  return text.trim().split(/\s+/)[0] ?? '';
}

const NAMED_LAYOUTS: Record<string, number> = {
  mono: 1,
  stereo: 2,
  '2.1': 3,
  '3.0': 3,
  quad: 4,
  '4.0': 4,
  '4.1': 5,
  '5.0': 5,
  '5.1': 6,
  '6.1': 7,
  '7.1': 8,
};

/** Channels of a layout name: `stereo` → 2, `5.1(side)` → 6, `3 channels` → 3; 0 when unknown. */
function channelsOf(layout: string): number {
  const counted = /^(\d+) channels/.exec(layout);
  if (counted !== null) return Number(counted[1]);
  return NAMED_LAYOUTS[layout.replace(/\(.*\)$/, '')] ?? 0;
}
