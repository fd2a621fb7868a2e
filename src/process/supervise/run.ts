import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import {
  LineSplitter,
  parseStatsLine,
  parseVstatsLine,
  PreludeParser,
  ProgressBlockParser,
} from '../ffmpeg/index.js';
import { ProgressTracker, type IoLabels } from '../progress/index.js';
import type { ProcessReport } from './report.js';
import { encoderWrapperOf, type SpawnFn } from './spawn.js';

/** Bounds on what one child may cost the server per second (docs/processes.md#states-orders-and-supervision: a flood affects no one else). */
export interface OutputBudget {
  /** Longest line kept, characters. */
  maxLineLength: number;
  /** Log lines parsed per second; the rest are counted and dropped. */
  linesPerSecond: number;
  /** Bytes read per second from one pipe; beyond it the pipe is paused until the next tick. */
  bytesPerSecond: number;
}

/** A pipe into the child at file descriptor `fd` (the child reads it as `pipe:<fd>`). */
export interface RunPipe {
  fd: number;
  /** Called with the server's end once the child is spawned. */
  attach: (stream: Writable) => void;
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
  pipes?: readonly RunPipe[];
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
  /** The encoder's pid: the child's, or the one a wrapper (the sandbox) reported. */
  private encoderPid: number | undefined;
  /** A signal asked for while a wrapper had not yet reported the encoder's pid. */
  private pendingSignal: NodeJS.Signals | undefined;
  private readonly prelude = new PreludeParser();
  private preludeOpen = true;
  private linesThisSecond = 0;
  private droppedLines = 0;
  private loggedLines = 0;
  private readonly readers: { stream: Readable; bytes: number; paused: boolean }[] = [];

  constructor(private readonly options: RunOptions) {
    this.tracker = new ProgressTracker(options.labels, options.now);
  }

  /** The encoder's pid (inside a sandbox: the encoder's, not bwrap's), once it runs. */
  get pid(): number | undefined {
    return this.encoderPid;
  }

  /** How many log lines of the child went into the report (progress lines not counted). */
  get logLines(): number {
    return this.loggedLines;
  }

  start(): void {
    const options = this.options;
    // A process group of its own: a Ctrl-C in the server's terminal must not reach the encoders
    // directly; the server stops them itself, in order.
    const stdio: ('ignore' | 'pipe')[] = ['ignore', 'ignore', 'pipe', 'pipe'];
    for (const pipe of options.pipes ?? []) {
      while (stdio.length <= pipe.fd) stdio.push('ignore');
      stdio[pipe.fd] = 'pipe';
    }
    const child = options.spawn(options.binary, options.args, { cwd: options.cwd, stdio, detached: true });
    this.child = child;
    for (const pipe of options.pipes ?? []) {
      const stream = child.stdio[pipe.fd] as Writable | null | undefined;
      // A child that exits closes its end: writes fail (EPIPE) and the exit handler reports it.
      stream?.on('error', () => undefined);
      if (stream) pipe.attach(stream);
    }
    const wrapper = encoderWrapperOf(child);
    let spawned = false;
    // Settles once the encoder runs (or is known never to): an exit is reported after it, so a
    // sandboxed encoder that ends at once still passes through running.
    let started: Promise<void> = Promise.resolve();
    child.once('spawn', () => {
      spawned = true;
      if (wrapper === undefined) {
        this.encoderPid = child.pid;
        options.onSpawn();
        return;
      }
      started = wrapper.encoderPid.then((pid) => {
        if (pid === undefined) return;
        this.encoderPid = pid;
        options.onSpawn();
        const pending = this.pendingSignal;
        this.pendingSignal = undefined;
        if (pending !== undefined) this.signal(pending);
      });
    });
    child.once('error', (error) => {
      if (!spawned) options.onSpawnError(error);
    });
    child.once('exit', (code, signal) => {
      if (wrapper === undefined) {
        options.onExit(code, signal);
        return;
      }
      void started.then(() => {
        if (this.encoderPid === undefined) {
          // bwrap could not set the sandbox up; its own message is the log's last line.
          options.onSpawnError(new Error(`the sandbox (bwrap) exited with code ${code} before starting it`));
          return;
        }
        const exit = wrapper.exitOf(code, signal);
        options.onExit(exit.code, exit.signal);
      });
    });
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

  /**
   * Sends a signal to the encoder. SIGKILL goes to the child's whole process group, so nothing it
   * started survives; in the sandbox to the encoder alone: as pid 1 of its namespace it takes
   * everything it started along, and bwrap, left alive, reaps it (a zombie otherwise) and exits.
   */
  signal(signal: NodeJS.Signals): void {
    const child = this.child;
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const pid = this.encoderPid;
    const wrapper = encoderWrapperOf(child);
    if (wrapper !== undefined && pid !== undefined) {
      if (signal === 'SIGKILL') sendSignal(pid, signal);
      else wrapper.signal(pid, signal);
      return;
    }
    if (signal === 'SIGKILL') {
      try {
        process.kill(-child.pid, 'SIGKILL');
        return;
      } catch {
        // Not a group leader (e.g. an injected spawn); fall back to the child alone.
      }
    }
    // A sandbox that has not reported the encoder yet gets the signal once it has.
    if (wrapper !== undefined) this.pendingSignal = signal;
    else child.kill(signal);
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

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: its exit is on the way.
  }
}
