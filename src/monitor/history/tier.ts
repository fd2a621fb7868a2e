import { readdirSync, renameSync, rmSync, type Dirent } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { makeDirectory, makeDirectorySync } from '../../persistence/make-dir.js';
import { OpenWindow } from './open-window.js';
import { SealedFiles } from './sealed-files.js';
import type { SeriesInfo } from './series-kind.js';
import { addPiece, type TierSeries } from './tier-piece.js';
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
 * Loading is synchronous (start-up, before the server listens); once it runs, every file operation
 * goes through the thread pool, and the caller runs one writing operation at a time (appendStep,
 * dropExpired, deleteOldest, seal, close; docs/history.md, The event loop and the disk). Reads may
 * run beside them: a read sees the tier as it was when it started.
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

  /**
   * Start time of the newest point, Unix seconds; -1 when the tier is empty. It moves with the
   * open window's chunks, in the same turn of the event loop as a read would see the point.
   */
  get newestStepSec(): number {
    return Math.max(this.newestStep, this.open?.newestStepSec ?? -1);
  }

  /**
   * Loads the files: sealed windows by name, the newest log as the open window (older logs are
   * sealed). Never throws: what cannot be read is skipped with one warning naming it (docs/history.md,
   * Damage), and a directory that cannot be made or listed leaves the tier empty with one error line
   * (it answers nothing from disk until the next start; writing is retried every step).
   * Synchronous: start-up only.
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
        this.open = OpenWindow.load(
          this.logPath(startSec),
          this.windowOf(startSec),
          this.newestStep,
          this.logger,
        );
        this.newestStep = this.open.newestStepSec;
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
  async appendStep(stepSec: number, points: readonly LoggedPoint[]): Promise<boolean> {
    if (stepSec <= this.newestStepSec) return false;
    const windowStart = stepSec - (stepSec % this.options.windowSec);
    if (windowStart !== this.open?.startSec) await this.openWindow(windowStart);
    await this.open!.append(stepSec, points);
    this.newestStep = stepSec;
    return true;
  }

  /** Deletes sealed files entirely older than the retention. Returns the bytes freed. */
  async dropExpired(nowSec: number): Promise<number> {
    let freed = 0;
    for (;;) {
      const oldest = this.sealed.oldestStartSec;
      if (oldest === undefined || oldest + this.options.windowSec > nowSec - this.options.retentionSec) break;
      freed += await this.sealed.deleteOldest();
    }
    return freed;
  }

  /** Start of the oldest sealed file, or undefined. */
  get oldestSealedSec(): number | undefined {
    return this.sealed.oldestStartSec;
  }

  /** Deletes the oldest sealed file (size cap). Returns its bytes. */
  deleteOldest(): Promise<number> {
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
   * The open window's points and the list of sealed files are taken when the call is made (before
   * it first waits), so a window sealed meanwhile is read once, from memory.
   */
  async read(
    wants: (series: SeriesInfo) => boolean,
    fromSec: number,
    toSec: number,
  ): Promise<Map<string, TierSeries>> {
    const open = new Map<string, TierSeries>();
    if (this.open !== undefined && this.open.startSec <= toSec) this.open.read(wants, open);
    const result = new Map<string, TierSeries>();
    await this.sealed.read(wants, fromSec, toSec, result);
    for (const { series, pieces } of open.values())
      for (const piece of pieces) addPiece(result, series, piece.startSec, piece.stepSec, piece);
    return result;
  }

  /**
   * The series with a window overlapping [fromSec, toSec] that `wantsMetric` accepts (read from
   * the cached indexes and the open window: nothing is decoded), added to `into` by key. A damaged
   * sealed file is skipped here; `read` logs it.
   */
  async seriesIn(
    fromSec: number,
    toSec: number,
    wantsMetric: (metricIndex: number) => boolean,
    into: Map<string, SeriesInfo>,
  ): Promise<void> {
    const open = new Map<string, SeriesInfo>();
    if (this.open !== undefined && this.open.startSec <= toSec) this.open.seriesIn(wantsMetric, open);
    await this.sealed.seriesIn(fromSec, toSec, wantsMetric, into);
    for (const [key, series] of open) into.set(key, series);
  }

  /**
   * Seals the open window (a new window started): segment file written, log deleted. The window
   * answers reads from memory until its segment file takes over, in one turn of the event loop; a
   * failure drops it (its log stays for the next start, which seals it).
   */
  async seal(): Promise<void> {
    const open = this.open;
    if (open === undefined) return;
    const path = join(this.dir, `${open.startSec}.seg`);
    try {
      const bytes = await open.seal(path);
      if (bytes > 0) this.sealed.add(open.startSec, path, bytes);
    } finally {
      if (this.open === open) this.open = undefined;
      this.newestStep = Math.max(this.newestStep, open.newestStepSec);
    }
    await rm(this.logPath(open.startSec), { force: true });
  }

  /** Closes the open log without sealing (shutdown: the window goes on after a restart). */
  async close(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    if (open !== undefined) this.newestStep = Math.max(this.newestStep, open.newestStepSec);
    await open?.close();
  }

  private async openWindow(startSec: number): Promise<void> {
    await this.seal();
    // Made again here: the directory may have been unusable at load, or removed since.
    await makeDirectory(this.dir, 0o700);
    this.open = await OpenWindow.open(
      this.logPath(startSec),
      this.windowOf(startSec),
      this.newestStep,
      this.logger,
    );
  }

  private windowOf(startSec: number): { startSec: number; stepSec: number; windowSec: number } {
    return { startSec, stepSec: this.options.stepSec, windowSec: this.options.windowSec };
  }

  /** Seals the window opened from an older log at load; a failure leaves that log for the next start. */
  private sealOnLoad(): void {
    const open = this.open;
    if (open === undefined) return;
    this.open = undefined;
    try {
      const path = join(this.dir, `${open.startSec}.seg`);
      const bytes = open.sealSync(path);
      if (bytes > 0) this.sealed.add(open.startSec, path, bytes);
      rmSync(this.logPath(open.startSec), { force: true });
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
