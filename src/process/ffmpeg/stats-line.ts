import { stripLogPrefixes } from './log-line.js';

/**
 * One classic ffmpeg progress line, e.g.
 * `frame=  250 fps= 25 q=28.0 size=    1024kB time=00:00:10.00 bitrate= 838.9kbits/s dup=0 drop=1 speed=1.00x`.
 * Fields ffmpeg printed as `N/A` (or left out) are `undefined`.
 */
export interface StatsLine {
  /** Frames of the first video output stream. */
  frame?: number;
  /** ffmpeg's own average since start (not a sliding window). */
  fps?: number;
  /** Quantizer of each video output stream, in output order. */
  q: number[];
  /** Bytes written to the first output file. */
  sizeBytes?: number;
  /** Position of the output, seconds. */
  timeSeconds?: number;
  bitrateKbit?: number;
  speed?: number;
  dup?: number;
  drop?: number;
  /** The last line of a run (`Lsize=`, `Lq=`). */
  final: boolean;
}

const FIELD = /([A-Za-z_]+)=\s*(\S+)/g;
const SIZE_UNITS: Record<string, number> = {
  B: 1,
  kB: 1024,
  KiB: 1024,
  mB: 1024 * 1024,
  MB: 1024 * 1024,
  MiB: 1024 * 1024,
  GB: 1024 ** 3,
  GiB: 1024 ** 3,
};

/**
 * Parses a classic progress line (with or without `[level] ` prefix, video or audio-only). Returns
 * `undefined` for any other line, including one whose fields cannot be read.
 */
export function parseStatsLine(raw: string): StatsLine | undefined {
  const line = stripLogPrefixes(raw).trimStart();
  if (!(line.startsWith('frame=') || line.startsWith('size=') || line.startsWith('Lsize='))) return undefined;
  const result: StatsLine = { q: [], final: false };
  let sawSize = false;
  let sawTime = false;
  for (const match of line.matchAll(FIELD)) {
    const key = match[1] as string;
    const value = match[2] as string;
    switch (key) {
      case 'frame':
        result.frame = parseCount(value);
        break;
      case 'fps':
        result.fps = parseNumber(value);
        break;
      case 'q':
      case 'Lq': {
        const q = parseNumber(value);
        if (q !== undefined) result.q.push(q === 0 ? 0 : q);
        if (key === 'Lq') result.final = true;
        break;
      }
      case 'size':
      case 'Lsize':
        sawSize = true;
        result.sizeBytes = parseSize(value);
        if (key === 'Lsize') result.final = true;
        break;
      case 'time':
        sawTime = true;
        result.timeSeconds = parseTime(value);
        break;
      case 'bitrate':
        result.bitrateKbit = parseNumber(value.replace(/kbits\/s$/, ''));
        break;
      case 'speed':
        result.speed = parseNumber(value.replace(/x$/, ''));
        break;
      case 'dup':
        result.dup = parseCount(value);
        break;
      case 'drop':
        result.drop = parseCount(value);
        break;
      default:
        break;
    }
  }
  return sawSize && sawTime ? result : undefined;
}

function parseNumber(text: string): number | undefined {
  if (text === 'N/A' || text === '') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function parseCount(text: string): number | undefined {
  const value = parseNumber(text);
  return value !== undefined && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** `1024kB`, `12KiB`, `N/A` → bytes. */
export function parseSize(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([A-Za-z]*)$/.exec(text);
  if (match === null) return undefined;
  const factor = SIZE_UNITS[match[2] === '' ? 'B' : (match[2] as string)];
  return factor === undefined ? undefined : Math.round(Number(match[1]) * factor);
}

/** `00:01:02.50` (possibly negative) → seconds. */
export function parseTime(text: string): number | undefined {
  const match = /^(-?)(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(text);
  if (match === null) return undefined;
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60 + Number(match[4]);
  return match[1] === '-' ? -seconds : seconds;
}
