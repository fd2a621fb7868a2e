import { readdirSync, renameSync, rmSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { makeDirectorySync } from '../../persistence/make-dir.js';
import { OpenWindow } from './open-window.js';
import { SealedFiles } from './sealed-files.js';
import type { SeriesInfo } from './series-kind.js';
import type { TierSeries } from './tier-piece.js';
import type { LoggedPoint } from './window-log.js';

export interface TierOptions {
  /** Directory name and log label: `minute`, `hour`. */
  name: string;
  /** Step of the points, seconds. */
  stepSec: number;
  /** Span of one file, seconds (a multiple of the step). */
  windowSec: number;
  /** Points older than this are dropped (whole files), seconds. */
  retentionSec: number;
}

/**
 * One tier of the history: points of every series at a fixed step, in files of one window each.
 * The open window's chunks are in memory (a few bits per point) and its points in a write-ahead
 * log; a window that ends is sealed into a compressed segment file. Retention deletes whole files.
 * All file I/O is synchronous: one small append per step, one segment write per window, and reads
 * of a few sections per query (docs/history.md).
 */
export class Tier {
  readonly options: TierOptions;
  private readonly dir: string;
  private readonly logger: Logger;
  private readonly sealed: SealedFiles;
  private open: OpenWindow | undefined;
  private newestStep = -1;

  constructor(root: string, options: TierOptions, logger: Logger) {
    this.options = options;
    this.dir = join(root, options.name);
    this.logger = logger.child({ tier: options.name });
    this.sealed = new SealedFiles(options.windowSec, options.stepSec, this.logger);
  }

  /** Start time of the newest point, Unix seconds; -1 when the tier is empty. */
  get newestStepSec(): number {
    return this.newestStep;
  }

  /**
   * Loads the files: sealed windows by name, the newest log as the open window (older logs are
   * sealed). Never throws: what cannot be read is skipped with one warning naming it (docs/history.md,
   * Damage), and a directory that cannot be made or listed leaves the tier empty with one error line
   * (it answers nothing from disk until the next start; writing is retried every step).
   */
  load(): void {
    let entries: Dirent[];
    try {
      makeDirectorySync(this.dir, 0o700);
      entries = readdirSync(this.dir, { withFileTypes: true });
    } catch (error) {
      this.logger.error(
        { dir: this.dir, problem: (error as Error).message },
        'metrics history: tier directory unusable; its files are not loaded',
      );
      return;
    }
    const logs: number[] = [];
    // Oldest first (names are window starts): the sealed files keep the newest indexes parsed.
    const startOf = (name: string): number => Number(/^\d+/.exec(name)?.[0] ?? -1);
    entries.sort((a, b) => startOf(a.name) - startOf(b.name));
    for (const entry of entries) {
      const { name } = entry;
      const file = this.windowFileOf(name);
      if (file === undefined) {
        // A temporary file of a write that did not finish.
        if (name.endsWith('.tmp') && entry.isFile()) rmSync(join(this.dir, name), { force: true });
        else this.logger.warn({ file: join(this.dir, name) }, 'metrics history: foreign entry ignored');
        continue;
      }
      if (!entry.isFile()) this.setAside(name, 'not a regular file');
      else if (file.kind === 'wal') logs.push(file.startSec);
      else this.sealed.load(file.startSec, join(this.dir, name));
    }
    logs.sort((a, b) => a - b);
    for (const startSec of logs) {
      // A log whose segment exists was sealed just before a crash; the segment is complete.
      if (this.sealed.has(startSec)) {
        rmSync(this.logPath(startSec), { force: true });
        continue;
      }
      this.sealOnLoad();
      try {
        this.openWindow(startSec);
      } catch (error) {
        this.setAside(`${startSec}.wal`, (error as Error).message);
      }
    }
    const newestSealed = this.sealed.newestStartSec;
    if (this.newestStep < 0 && newestSealed !== undefined) {
      this.newestStep = newestSealed + this.options.windowSec - this.options.stepSec;
    }
  }

  /**
   * Appends the points of one step (start `stepSec`). A step at or before the newest one (the clock
   * went back) is ignored. Returns whether it was kept.
   */
  appendStep(stepSec: number, points: readonly LoggedPoint[]): boolean {
    if (stepSec <= this.newestStep) return false;
    const windowStart = stepSec - (stepSec % this.options.windowSec);
    if (windowStart !== this.open?.startSec) this.openWindow(windowStart);
    this.open!.append(stepSec, points);
    this.newestStep = stepSec;
    return true;
  }

  /** Deletes sealed files entirely older than the retention. Returns the bytes freed. */
  dropExpired(nowSec: number): number {
    let freed = 0;
    for (;;) {
      const oldest = this.sealed.oldestStartSec;
      if (oldest === undefined || oldest + this.options.windowSec > nowSec - this.options.retentionSec) break;
      freed += this.sealed.deleteOldest();
    }
    return freed;
  }

  /** Start of the oldest sealed file, or undefined. */
  get oldestSealedSec(): number | undefined {
    return this.sealed.oldestStartSec;
  }

  /** Deletes the oldest sealed file (size cap). Returns its bytes. */
  deleteOldest(): number {
    return this.sealed.deleteOldest();
  }

  /** Bytes on disk: sealed files and the open log. */
  get diskBytes(): number {
    return (this.open?.logBytes ?? 0) + this.sealed.diskBytes;
  }

  /** Bytes held by the open window's chunks (memory accounting). */
  get openChunkBytes(): number {
    return this.open?.chunkBytes ?? 0;
  }

  /** Series with a chunk in the open window (they are kept alive until it is sealed). */
  hasOpenChunk(key: string): boolean {
    return this.open?.has(key) ?? false;
  }

  /**
   * The windows overlapping [fromSec, toSec] of the series accepted by `wants`, oldest first
   * (whole windows: the caller picks its points). A damaged sealed file is skipped with one log line.
   */
  read(wants: (series: SeriesInfo) => boolean, fromSec: number, toSec: number): Map<string, TierSeries> {
    const result = new Map<string, TierSeries>();
    this.sealed.read(wants, fromSec, toSec, result);
    if (this.open !== undefined && this.open.startSec <= toSec) this.open.read(wants, result);
    return result;
  }

  /**
   * The series with a window overlapping [fromSec, toSec] that `wantsMetric` accepts (read from
   * the cached indexes and the open window: nothing is decoded), added to `into` by key. A damaged
   * sealed file is skipped here; `read` logs it.
   */
  seriesIn(
    fromSec: number,
    toSec: number,
    wantsMetric: (metricIndex: number) => boolean,
    into: Map<string, SeriesInfo>,
  ): void {
    this.sealed.seriesIn(fromSec, toSec, wantsMetric, into);
    if (this.open !== undefined && this.open.startSec <= toSec) this.open.seriesIn(wantsMetric, into);
  }

  /** Seals the open window (shutdown, or a new window started): segment file written, log deleted. */
  seal(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    const path = join(this.dir, `${open.startSec}.seg`);
    const bytes = open.seal(path);
    if (bytes > 0) this.sealed.add(open.startSec, path, bytes);
    rmSync(this.logPath(open.startSec), { force: true });
  }

  /** Closes the open log without sealing (shutdown: the window goes on after a restart). */
  close(): void {
    this.open?.close();
    this.open = undefined;
  }

  private openWindow(startSec: number): void {
    this.seal();
    // Made again here: the directory may have been unusable at load, or removed since.
    makeDirectorySync(this.dir, 0o700);
    const { stepSec, windowSec } = this.options;
    const window = { startSec, stepSec, windowSec };
    this.open = new OpenWindow(this.logPath(startSec), window, this.newestStep, this.logger);
    this.newestStep = this.open.newestStepSec;
  }

  /** Seals the window opened from an older log; a failure leaves that log for the next start. */
  private sealOnLoad(): void {
    try {
      this.seal();
    } catch (error) {
      this.logger.error(
        { problem: (error as Error).message },
        'metrics history: sealing a window failed; its log is kept for the next start',
      );
    }
  }

  /**
   * The window start and kind of a file name of this tier (`<start>.seg`, `<start>.wal`, the
   * start a multiple of the window); `undefined` for any other name.
   */
  private windowFileOf(name: string): { startSec: number; kind: 'seg' | 'wal' } | undefined {
    const match = /^(\d{1,15})\.(seg|wal)$/.exec(name);
    if (match === null) return undefined;
    const startSec = Number(match[1]);
    if (startSec % this.options.windowSec !== 0) return undefined;
    return { startSec, kind: match[2] as 'seg' | 'wal' };
  }

  /**
   * Moves an entry that has a window file's name but cannot be read as one to `<name>.damaged`
   * (kept for inspection, and out of the way of the window's own file), with one warning.
   */
  private setAside(name: string, problem: string): void {
    const path = join(this.dir, name);
    const damaged = `${path}.damaged`;
    try {
      renameSync(path, damaged);
      this.logger.warn(
        { file: path, problem, movedTo: damaged },
        'metrics history: unreadable entry set aside',
      );
    } catch (error) {
      this.logger.warn(
        { file: path, problem, moveFailed: (error as Error).message },
        'metrics history: unreadable entry skipped',
      );
    }
  }

  private logPath(startSec: number): string {
    return join(this.dir, `${startSec}.wal`);
  }
}
