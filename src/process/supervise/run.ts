import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  LineSplitter,
  parseStatsLine,
  parseVstatsLine,
  PreludeParser,
  ProgressBlockParser,
} from '../ffmpeg/index.js';
import { ProgressTracker, type IoLabels } from '../progress/index.js';
import type { ProcessReport } from './report.js';
import type { SpawnFn } from './spawn.js';

/** Bounds on what one child may cost the server per second (SPEC §7.3: a flood affects no one else). */
export interface OutputBudget {
  /** Longest line kept, characters. */
  maxLineLength: number;
  /** Log lines parsed per second; the rest are counted and dropped. */
  linesPerSecond: number;
  /** Bytes read per second from one pipe; beyond it the pipe is paused until the next tick. */
  bytesPerSecond: number;
}

export interface RunOptions {
  binary: string;
  args: string[];
  cwd: string;
  labels: IoLabels;
  report: ProcessReport;
  budget: OutputBudget;
  spawn: SpawnFn;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  onSpawn: () => void;
  onSpawnError: (error: Error) => void;
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void;
  /** Called when the child shows progress (a counter moved). */
  onProgress: () => void;
}

/** File descriptor of the child the server reads the `-progress` stream from. */
export const PROGRESS_FD = 3;

/**
 * One run of an encoder: the child process and the parsing of what it writes (stderr log and
 * progress lines, the `-progress` stream on fd 3; `-vstats` lines are handed in by the supervisor).
 */
export class FfmpegRun {
  readonly tracker: ProgressTracker;
  private child: ChildProcess | undefined;
  private readonly prelude = new PreludeParser();
  private preludeOpen = true;
  private linesThisSecond = 0;
  private droppedLines = 0;
  private loggedLines = 0;
  private readonly readers: { stream: Readable; bytes: number; paused: boolean }[] = [];

  constructor(private readonly options: RunOptions) {
    this.tracker = new ProgressTracker(options.labels, options.now);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How many log lines of the child went into the report (progress lines not counted). */
  get logLines(): number {
    return this.loggedLines;
  }

  start(): void {
    const options = this.options;
    // A process group of its own: a Ctrl-C in the server's terminal must not reach the encoders
    // directly; the server stops them itself, in order.
    const child = options.spawn(options.binary, options.args, {
      cwd: options.cwd,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child = child;
    let spawned = false;
    child.once('spawn', () => {
      spawned = true;
      options.onSpawn();
    });
    child.once('error', (error) => {
      if (!spawned) options.onSpawnError(error);
    });
    child.once('exit', (code, signal) => options.onExit(code, signal));
    this.read(child.stdio[2], (line) => this.onLogLine(line));
    const progress = new ProgressBlockParser();
    this.read(child.stdio[PROGRESS_FD] as Readable | null, (line) => {
      const block = progress.push(line);
      if (block !== undefined && this.tracker.onProgressBlock(block)) options.onProgress();
    });
  }

  /** A line of the `-vstats` stream (read by the supervisor's channel). */
  onVstatsLine(line: string): void {
    const vstats = parseVstatsLine(line);
    if (vstats !== undefined && this.tracker.onVstats(vstats)) this.options.onProgress();
  }

  /** Sends a signal to the child (SIGKILL to its whole process group, so nothing it started survives). */
  signal(signal: NodeJS.Signals): void {
    const child = this.child;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    if (signal === 'SIGKILL') {
      try {
        process.kill(-child.pid, 'SIGKILL');
        return;
      } catch {
        // Not a group leader (e.g. an injected spawn); fall back to the child alone.
      }
    }
    child.kill(signal);
  }

  /** Once per second: refill the output budget and say how much was dropped. */
  tick(nowMs: number): void {
    if (this.droppedLines > 0) {
      this.options.report.addLine(
        Math.floor(nowMs / 1000),
        `streamcore: dropped ${this.droppedLines} log lines (more than ${this.options.budget.linesPerSecond} per second)`,
      );
      this.droppedLines = 0;
    }
    this.linesThisSecond = 0;
    this.refillBudget();
  }

  /**
   * A new second of the byte budget: paused pipes are read again. Also called when the child is
   * being stopped: a child blocked on a write to a paused pipe could not write its last lines
   * and exit, and would get SIGKILL.
   */
  refillBudget(): void {
    for (const reader of this.readers) {
      reader.bytes = 0;
      if (reader.paused) {
        reader.paused = false;
        reader.stream.resume();
      }
    }
  }

  private read(stream: Readable | null | undefined, onLine: (line: string) => void): void {
    if (stream === null || stream === undefined) return;
    const splitter = new LineSplitter({ maxLineLength: this.options.budget.maxLineLength, onLine });
    const reader = { stream, bytes: 0, paused: false };
    this.readers.push(reader);
    stream.on('data', (chunk: Buffer) => {
      splitter.push(chunk);
      reader.bytes += chunk.length;
      if (reader.bytes > this.options.budget.bytesPerSecond && !reader.paused) {
        // Back-pressure: the child blocks on its next write until the next tick.
        reader.paused = true;
        stream.pause();
      }
    });
    stream.once('end', () => splitter.end());
    // A pipe error only ends this run's parsing; the exit handler still runs.
    stream.on('error', () => undefined);
  }

  private onLogLine(line: string): void {
    if (++this.linesThisSecond > this.options.budget.linesPerSecond) {
      this.droppedLines++;
      return;
    }
    const stats = parseStatsLine(line);
    if (stats !== undefined) {
      if (this.preludeOpen) {
        this.preludeOpen = false;
        this.options.report.endPrelude();
      }
      if (this.tracker.onStatsLine(stats)) this.options.onProgress();
      return;
    }
    if (this.preludeOpen && this.prelude.push(line)) this.tracker.setPrelude(this.prelude.result());
    this.loggedLines++;
    this.options.report.addLine(Math.floor(this.options.now() / 1000), line);
  }
}
