import type { Logger } from 'pino';
import { SeriesChunkEncoder } from './series-chunk.js';
import { writeFileAtomic, writeFileAtomicSync } from './atomic-file.js';
import { writeSegment, writeSegmentSync, type SealedChunk } from './segment-file.js';
import { KIND_COLUMNS, type SeriesInfo } from './series-kind.js';
import { addPiece, type TierSeries } from './tier-piece.js';
import {
  readWindowLog,
  readWindowLogAsync,
  WindowLogWriter,
  type LoggedPoint,
  type LogWindow,
  type ReadLog,
} from './window-log.js';

/**
 * The open window of a tier: its points in a write-ahead log (`<window start>.wal`, one record per
 * step) and, per series, in a chunk encoded in memory (a few bits per point), which becomes the
 * segment file when the window is sealed. Opening replays the log's intact records.
 */
export class OpenWindow {
  readonly startSec: number;
  private readonly stepSec: number;
  private readonly log: WindowLogWriter;
  private readonly chunks = new Map<string, { series: SeriesInfo; chunk: SeriesChunkEncoder }>();
  /** Start of the newest step appended, Unix seconds; -1 while empty. */
  newestStepSec: number;

  /**
   * Opens (creates or replays) the log at `path` while the server runs, through the thread pool;
   * steps at or before `newestStepSec` are skipped. Damaged records are skipped with one warning
   * naming the file, and the log is rewritten without them. Throws when the log cannot be read or
   * written (not a file, permissions).
   */
  static async open(
    path: string,
    window: LogWindow,
    newestStepSec: number,
    logger: Logger,
  ): Promise<OpenWindow> {
    const read = await readWindowLogAsync(path, window);
    if (read.damaged.length > 0) {
      warnDamaged(logger, path, read);
      await writeFileAtomic(path, read.records);
    }
    return new OpenWindow(path, window, newestStepSec, read);
  }

  /** `open` for start-up only (a tier loading before the server listens). */
  static load(path: string, window: LogWindow, newestStepSec: number, logger: Logger): OpenWindow {
    const read = readWindowLog(path, window);
    if (read.damaged.length > 0) {
      warnDamaged(logger, path, read);
      writeFileAtomicSync(path, read.records);
    }
    return new OpenWindow(path, window, newestStepSec, read);
  }

  private constructor(path: string, window: LogWindow, newestStepSec: number, read: ReadLog) {
    this.startSec = window.startSec;
    this.stepSec = window.stepSec;
    this.newestStepSec = newestStepSec;
    // A damaged log was rewritten with its intact records only.
    let bytes = read.byteLength;
    if (read.damaged.length > 0) bytes = read.records.reduce((sum, record) => sum + record.length, 0);
    this.log = new WindowLogWriter(path, bytes);
    for (const step of read.steps) {
      if (step.stepSec <= this.newestStepSec) continue;
      this.addToChunks(step.stepSec, step.points);
    }
  }

  /** Bytes of the log on disk. */
  get logBytes(): number {
    return this.log.byteLength;
  }

  /** Bytes held by the chunks (memory accounting). */
  get chunkBytes(): number {
    let bytes = 0;
    for (const { chunk } of this.chunks.values()) bytes += chunk.memoryBytes;
    return bytes;
  }

  has(key: string): boolean {
    return this.chunks.has(key);
  }

  /**
   * Appends one step (after the newest): one log record, then the chunks, which a query sees from
   * the moment the record is written (a step whose record fails is lost, as it would be after a
   * restart).
   */
  async append(stepSec: number, points: readonly LoggedPoint[]): Promise<void> {
    await this.log.appendStep(stepSec, points);
    this.addToChunks(stepSec, points);
  }

  /** The points so far of the series `wants` accepts, added to `result`. */
  read(wants: (series: SeriesInfo) => boolean, result: Map<string, TierSeries>): void {
    for (const { series, chunk } of this.chunks.values())
      if (wants(series)) addPiece(result, series, this.startSec, this.stepSec, chunk.decode());
  }

  /** The series with a point in the window that `wantsMetric` accepts, added to `into` by key. */
  seriesIn(wantsMetric: (metricIndex: number) => boolean, into: Map<string, SeriesInfo>): void {
    for (const { series } of this.chunks.values())
      if (wantsMetric(series.metricIndex)) into.set(series.key, series);
  }

  /**
   * Closes the log and writes the chunks as the segment file `path` (none when empty); its bytes.
   * The chunks still answer reads until the caller moves the window to its sealed files.
   */
  async seal(path: string): Promise<number> {
    await this.log.close();
    if (this.chunks.size === 0) return 0;
    return writeSegment(path, this.stepSec, this.startSec, this.sortedChunks());
  }

  /** `seal` for start-up only: a window loaded from an earlier run's log (its log is not open). */
  sealSync(path: string): number {
    if (this.chunks.size === 0) return 0;
    return writeSegmentSync(path, this.stepSec, this.startSec, this.sortedChunks());
  }

  /** Closes the log (the window goes on after a restart). */
  close(): Promise<void> {
    return this.log.close();
  }

  private sortedChunks(): SealedChunk[] {
    return [...this.chunks.values()].sort((a, b) => (a.series.key < b.series.key ? -1 : 1));
  }

  private addToChunks(stepSec: number, points: readonly LoggedPoint[]): void {
    const step = (stepSec - this.startSec) / this.stepSec;
    for (const { series, values } of points) {
      let open = this.chunks.get(series.key);
      if (open === undefined) {
        open = { series, chunk: new SeriesChunkEncoder(KIND_COLUMNS[series.kind]) };
        this.chunks.set(series.key, open);
      }
      open.chunk.append(step, values);
    }
    this.newestStepSec = stepSec;
  }
}

function warnDamaged(logger: Logger, path: string, read: ReadLog): void {
  logger.warn(
    {
      file: path,
      damagedSpans: read.damaged.map(({ from, to }) => `${from}-${to}`),
      keptRecords: read.records.length,
    },
    'metrics history: damaged bytes in the write-ahead log skipped; the intact records are kept',
  );
}
