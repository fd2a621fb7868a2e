import { execFile } from 'node:child_process';
import { constants, open } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { promisify } from 'node:util';
import { LineSplitter } from '../ffmpeg/index.js';

const execFileAsync = promisify(execFile);
// The callback form returns a plain descriptor; a FileHandle would close it when collected.
const openFd = promisify(open);

/**
 * A named pipe that ffmpeg writes its `-vstats` lines into. ffmpeg opens the vstats file with
 * `fopen`, which cannot open the socket pairs Node uses for a child's extra stdio (`/dev/fd/N`
 * fails with ENXIO), so the server makes a FIFO and reads it. The server holds the FIFO open for
 * reading and writing, so ffmpeg never blocks opening it and a run's end is no end of the stream;
 * one channel serves every run of a process.
 */
export class VstatsChannel {
  private bytes = 0;
  private paused = false;

  private constructor(
    readonly path: string,
    private readonly socket: Socket,
    private readonly bytesPerSecond: number,
  ) {}

  /**
   * Creates the FIFO at `path` and starts reading it; `undefined` when that is not possible
   * (no `mkfifo`, not a POSIX system): the process then runs without per-frame statistics.
   */
  static async open(
    path: string,
    options: { maxLineLength: number; bytesPerSecond: number; onLine: (line: string) => void },
  ): Promise<VstatsChannel | undefined> {
    try {
      await execFileAsync('mkfifo', ['-m', '600', path]);
      const fd = await openFd(path, constants.O_RDWR | constants.O_NONBLOCK);
      const socket = new Socket({ fd, readable: true, writable: false });
      const channel = new VstatsChannel(path, socket, options.bytesPerSecond);
      const splitter = new LineSplitter({ maxLineLength: options.maxLineLength, onLine: options.onLine });
      socket.on('data', (chunk: Buffer) => channel.onData(chunk, splitter));
      socket.on('error', () => undefined);
      return channel;
    } catch {
      await rm(path, { force: true }).catch(() => undefined);
      return undefined;
    }
  }

  /** Refills the read budget; call once per second. */
  tick(): void {
    this.bytes = 0;
    if (this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  async close(): Promise<void> {
    this.socket.destroy();
    await rm(this.path, { force: true }).catch(() => undefined);
  }

  private onData(chunk: Buffer, splitter: LineSplitter): void {
    splitter.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes > this.bytesPerSecond && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }
}
