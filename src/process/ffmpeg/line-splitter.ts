import { StringDecoder } from 'node:string_decoder';

export interface LineSplitterOptions {
  /** Longer lines are cut to this many characters and marked as truncated. */
  maxLineLength: number;
  /** Called for each complete line, without its terminator. */
  onLine: (line: string) => void;
}

/** Appended to a line that was cut at `maxLineLength`. */
export const TRUNCATION_MARK = ' [truncated]';

/**
 * Splits a byte stream into lines ending in `\n`, `\r\n` or `\r` (ffmpeg ends its progress line
 * with a bare `\r`). A line never grows past `maxLineLength`: the rest of an over-long line is
 * dropped while it streams in, so a child that writes megabytes without a newline costs bounded
 * memory.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  /** True while the rest of an over-long line is being discarded. */
  private discarding = false;

  constructor(private readonly options: LineSplitterOptions) {}

  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (;;) {
      const end = nextTerminator(text, start);
      if (end === -1) break;
      this.emit(text.slice(start, end));
      start = end + 1;
      // Treat `\r\n` as one terminator; a lone `\r` still ends the line.
      if (text.charCodeAt(end) === 13 && text.charCodeAt(start) === 10) start++;
    }
    this.append(text.slice(start));
  }

  /** Emits what is left when the stream ends. */
  end(): void {
    this.append(this.decoder.end());
    if (this.partial !== '' || this.discarding) this.emit('');
  }

  private append(rest: string): void {
    if (rest === '' || this.discarding) return;
    this.partial += rest;
    if (this.partial.length > this.options.maxLineLength) {
      this.partial = this.partial.slice(0, this.options.maxLineLength);
      this.discarding = true;
    }
  }

  private emit(tail: string): void {
    let line: string;
    if (this.discarding) {
      line = this.partial + TRUNCATION_MARK;
    } else {
      line = this.partial + tail;
      if (line.length > this.options.maxLineLength) {
        line = line.slice(0, this.options.maxLineLength) + TRUNCATION_MARK;
      }
    }
    this.partial = '';
    this.discarding = false;
    // ffmpeg pads its progress line with spaces so that it overwrites the previous one.
    line = line.trimEnd();
    if (line !== '') this.options.onLine(line);
  }
}

function nextTerminator(text: string, from: number): number {
  const newline = text.indexOf('\n', from);
  const carriage = text.indexOf('\r', from);
  if (newline === -1) return carriage;
  if (carriage === -1) return newline;
  return Math.min(newline, carriage);
}
