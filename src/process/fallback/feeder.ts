import type { ChildProcess } from 'node:child_process';
import { encoderPidOf, type SpawnFn } from '../supervise/index.js';
import { FlvTagReader, type FlvTag } from './flv.js';

export interface FeederOptions {
  binary: string;
  args: string[];
  cwd: string;
  spawn: SpawnFn;
  onTag: (tag: FlvTag) => void;
  /** The feeder is gone; `reason` is its last error line or how it ended. */
  onEnd: (reason: string) => void;
}

/** Longest error line kept from a feeder (it names why the source could not be read). */
const MAX_REASON = 300;

/**
 * One feeder ffmpeg: started through the encoders' spawn (so inside their sandbox, under the
 * same access policy), its FLV on stdout split into tags. `stop` ends it at once: a feeder holds
 * no output that a graceful stop would save.
 */
export class Feeder {
  private child: ChildProcess | undefined;
  private ended = false;
  private lastError = '';

  constructor(private readonly options: FeederOptions) {}

  start(): void {
    const options = this.options;
    const child = options.spawn(options.binary, options.args, {
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    const reader = new FlvTagReader((tag) => {
      if (!this.ended) options.onTag(tag);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (error) {
        this.lastError = (error as Error).message;
        this.stop();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const lines = chunk.toString('utf8').trim().split('\n');
      const last = lines[lines.length - 1]?.trim();
      if (last !== undefined && last !== '') this.lastError = last.slice(0, MAX_REASON);
    });
    child.stdout?.on('error', () => undefined);
    child.stderr?.on('error', () => undefined);
    child.once('error', (error) => this.end(error.message));
    child.once('exit', (code, signal) =>
      this.end(this.lastError !== '' ? this.lastError : `exited (${signal ?? `code ${code}`})`),
    );
  }

  /** Kills the feeder; `onEnd` is not called for a feeder stopped this way. */
  stop(): void {
    if (this.ended) return;
    this.ended = true;
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    void encoderPidOf(child).then((pid) => {
      if (pid !== undefined && pid !== child.pid) sendKill(pid);
    });
    child.kill('SIGKILL');
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onEnd(reason);
  }
}

function sendKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
