import type { CredentialMask } from './credential-mask.js';
import type { ProcessState } from './states.js';

/** A log line: Unix seconds (as ffmpeg-independent wall time) and the text. */
export type LogEntry = [seconds: number, line: string];

/** The log of one run of a process. */
export interface RunLog {
  /** When the run started, Unix seconds. */
  createdAt: number;
  /** Lines before the first progress line, oldest first. */
  prelude: string[];
  /** The last non-progress lines, oldest first. */
  log: LogEntry[];
  /** When the run ended and how (only for runs in the history). */
  exitedAt?: number;
  exitState?: ProcessState;
}

export interface ReportLimits {
  /** Lines kept in the log of a run (`ffmpeg.log.max_lines`). */
  maxLines: number;
  /** Earlier runs kept (`ffmpeg.log.max_history`). */
  maxHistory: number;
}

/** Bound on prelude lines, so a child that never starts progressing cannot grow it without end. */
const MAX_PRELUDE_LINES = 200;

/**
 * The report of a process (docs/processes.md#routes-and-answers): the log of the current run and a short history
 * of earlier runs. Everything is bounded: `maxLines` lines per run, `maxHistory` runs. Every line
 * goes through `mask` on the way in, so no line the API shows (prelude, log, `last_logline`)
 * carries credentials, whoever wrote it.
 */
export class ProcessReport {
  private current: RunLog;
  private readonly history: RunLog[] = [];
  private inPrelude = true;
  private lastLine = '';
  private changes = 0;

  constructor(
    private readonly limits: ReportLimits,
    createdAt: number,
    private readonly mask: CredentialMask,
  ) {
    this.current = { createdAt, prelude: [], log: [] };
  }

  /** Begins the log of a new run; the current one moves into the history if it has content. */
  startRun(nowSeconds: number): void {
    this.changes++;
    this.archiveCurrent();
    this.current = { createdAt: nowSeconds, prelude: [], log: [] };
    this.inPrelude = true;
  }

  /** Marks how the current run ended. */
  endRun(nowSeconds: number, state: ProcessState): void {
    this.changes++;
    this.current.exitedAt = nowSeconds;
    this.current.exitState = state;
  }

  /**
   * Records a non-progress line, credentials masked. With `keepLastLine` the line goes into the
   * log but `lastLogLine` stays what it was (a note that would hide ffmpeg's own reason).
   */
  addLine(nowSeconds: number, text: string, options: { keepLastLine?: boolean } = {}): void {
    const line = this.mask(text);
    this.changes++;
    if (options.keepLastLine !== true) this.lastLine = line;
    if (this.inPrelude && this.current.prelude.length < MAX_PRELUDE_LINES) this.current.prelude.push(line);
    this.current.log.push([nowSeconds, line]);
    // `while`: a reload may have lowered the limit.
    while (this.current.log.length > this.limits.maxLines) this.current.log.shift();
  }

  /** The first progress line ends the prelude. */
  endPrelude(): void {
    this.inPrelude = false;
  }

  /**
   * Grows with every change of what `currentRun` and `earlierRuns` hold, so a reader can keep an
   * encoded copy of the report and know when it is stale (the process list encodes each report
   * once per change, not once per request).
   */
  get revision(): number {
    return this.changes;
  }

  /** The last non-progress line of any run. */
  get lastLogLine(): string {
    return this.lastLine;
  }

  currentRun(): RunLog {
    return this.current;
  }

  /** Earlier runs, oldest first. */
  earlierRuns(): RunLog[] {
    return this.history;
  }

  /** Takes over another report's runs (a replaced process keeps its log history, docs/processes.md#routes-and-answers). */
  adopt(previous: ProcessReport): void {
    this.changes++;
    previous.archiveCurrent();
    this.history.splice(0, this.history.length, ...previous.history);
    this.lastLine = previous.lastLine;
  }

  private archiveCurrent(): void {
    this.changes++;
    if (this.current.prelude.length === 0 && this.current.log.length === 0) return;
    this.history.push(this.current);
    this.current = { createdAt: this.current.createdAt, prelude: [], log: [] };
    while (this.history.length > this.limits.maxHistory) this.history.shift();
  }
}
