/**
 * One block of ffmpeg's machine-readable progress (`-progress <url>`): `key=value` lines ending
 * with `progress=continue` or `progress=end`.
 */
export interface ProgressBlock {
  frame?: number;
  fps?: number;
  /** Quantizer per output stream, keyed `<file>:<stream>`. */
  streamQ: Map<string, number>;
  /** Bytes written to the first output file. */
  totalSizeBytes?: number;
  /** Output position, seconds. */
  outTimeSeconds?: number;
  bitrateKbit?: number;
  speed?: number;
  dup?: number;
  drop?: number;
  /** `progress=end`: the run is over. */
  end: boolean;
}

const STREAM_Q = /^stream_(\d+)_(\d+)_q$/;

/** Collects `key=value` lines and yields a block at each `progress=` line. */
export class ProgressBlockParser {
  private block: ProgressBlock = emptyBlock();

  /** Feeds one line; returns the finished block when the line closes one. */
  push(line: string): ProgressBlock | undefined {
    const equals = line.indexOf('=');
    if (equals <= 0) return undefined;
    const key = line.slice(0, equals).trim();
    const value = line.slice(equals + 1).trim();
    const block = this.block;
    switch (key) {
      case 'frame':
        block.frame = count(value);
        break;
      case 'fps':
        block.fps = number(value);
        break;
      case 'total_size':
        block.totalSizeBytes = count(value);
        break;
      case 'out_time_us': {
        const micros = number(value);
        block.outTimeSeconds = micros === undefined ? undefined : micros / 1e6;
        break;
      }
      case 'bitrate':
        block.bitrateKbit = number(value.replace(/kbits\/s$/, ''));
        break;
      case 'speed':
        block.speed = number(value.replace(/x$/, ''));
        break;
      case 'dup_frames':
        block.dup = count(value);
        break;
      case 'drop_frames':
        block.drop = count(value);
        break;
      case 'progress':
        block.end = value === 'end';
        this.block = emptyBlock();
        return block;
      default: {
        const stream = STREAM_Q.exec(key);
        const q = number(value);
        if (stream !== null && q !== undefined)
          block.streamQ.set(`${stream[1]}:${stream[2]}`, q === 0 ? 0 : q);
      }
    }
    return undefined;
  }
}

function emptyBlock(): ProgressBlock {
  return { streamQ: new Map(), end: false };
}

function number(text: string): number | undefined {
  if (text === '' || text === 'N/A') return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function count(text: string): number | undefined {
  const value = number(text);
  return value !== undefined && Number.isInteger(value) && value >= 0 ? value : undefined;
}
