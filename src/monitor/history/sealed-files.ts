import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { DecodedCache } from './decoded-cache.js';
import { readSegmentIndex, readSegmentIndexAsync } from './segment-file.js';
import type { SegmentIndex } from './segment-index.js';
import { DamagedFile, readSealed, type FileToRead } from './sealed-read.js';
import type { SeriesInfo } from './series-kind.js';
import { SeriesTables } from './series-table.js';
import type { TierSeries } from './tier-piece.js';

interface SealedFile {
  startSec: number;
  path: string;
  bytes: number;
}

/**
 * Indexes of sealed files kept parsed, per tier, by count and by bytes (the most recently used
 * first): loading parses every index anyway to check it, and a chart's repeated range reads
 * them again. A year of the hour tier is 37 files; the bytes bound matters for servers with
 * thousands of series (about 40 bytes per series and file).
 */
const INDEX_CACHE_SIZE = 64;
const INDEX_CACHE_BYTES = 16 << 20;
/** Decoded values kept per tier, bytes (a year of hourly points of 100 series takes about 11 MiB). */
const DECODED_CACHE_BYTES = 32 << 20;

/**
 * The sealed windows of a tier, oldest first, with a cache of their parsed indexes and of
 * decoded values (sealed files never change). A file whose index is damaged is skipped on load; a
 * series whose sections are damaged is skipped on a read, and the file's other series still
 * answer; one log line per damaged file.
 */
export class SealedFiles {
  private readonly files: SealedFile[] = [];
  private readonly windowSec: number;
  private readonly stepSec: number;
  private readonly logger: Logger;
  private readonly indexCache = new Map<string, SegmentIndex>();
  private indexCacheBytes = 0;
  private readonly decoded = new DecodedCache(DECODED_CACHE_BYTES);
  private readonly tables = new SeriesTables();
  /** Damaged files warned about (each leaves the set with its file). */
  private readonly warned = new Set<string>();

  /** `windowSec`, `stepSec`: the tier's, seconds; a file holding another window or step is damaged. */
  constructor(windowSec: number, stepSec: number, logger: Logger) {
    this.windowSec = windowSec;
    this.stepSec = stepSec;
    this.logger = logger;
  }

  /**
   * Checks a file's index and adds it, keeping the parsed index (load files oldest first: the
   * newest stay when the cache is full); a damaged one is left on disk, skipped, and logged once.
   * Synchronous: start-up only (a tier loads before the server listens).
   */
  load(startSec: number, path: string): void {
    try {
      const index = readSegmentIndex(path, this.tables);
      // A file renamed or copied from another window or tier would answer at the wrong times.
      if (index.windowStartSec !== startSec || index.stepSec !== this.stepSec)
        throw new Error(
          `holds the window from ${index.windowStartSec} at ${index.stepSec} s, not its name's`,
        );
      this.add(startSec, path, statSync(path).size);
      this.remember(path, index);
    } catch (error) {
      this.skip(path, error);
    }
  }

  /** Adds a file just written. */
  add(startSec: number, path: string, bytes: number): void {
    this.files.push({ startSec, path, bytes });
    this.files.sort((a, b) => a.startSec - b.startSec);
  }

  has(startSec: number): boolean {
    return this.files.some((file) => file.startSec === startSec);
  }

  get oldestStartSec(): number | undefined {
    return this.files[0]?.startSec;
  }

  get newestStartSec(): number | undefined {
    return this.files.at(-1)?.startSec;
  }

  get diskBytes(): number {
    let bytes = 0;
    for (const file of this.files) bytes += file.bytes;
    return bytes;
  }

  /**
   * Deletes the oldest file: it leaves the tier at once (a query started later does not read it),
   * then the file goes. Returns its bytes.
   */
  async deleteOldest(): Promise<number> {
    const oldest = this.files.shift();
    if (oldest === undefined) return 0;
    this.forget(oldest.path);
    this.warned.delete(oldest.path);
    await rm(oldest.path, { force: true });
    return oldest.bytes;
  }

  /** The values of the series `wants` accepts from the files overlapping [fromSec, toSec], into `result`. */
  async read(
    wants: (series: SeriesInfo) => boolean,
    fromSec: number,
    toSec: number,
    result: Map<string, TierSeries>,
  ): Promise<void> {
    // The files as they are now: one sealed or deleted while this read waits is not its business
    // (the caller took the open window's points at the same moment).
    let overlapping = this.overlapping(fromSec, toSec);
    for (;;) {
      const files: FileToRead[] = [];
      for (const file of overlapping) {
        try {
          files.push({ path: file.path, index: await this.indexOf(file.path) });
        } catch (error) {
          this.drop(file.path, error);
        }
      }
      try {
        await readSealed(files, wants, this.decoded, result, (file, position, problem) => {
          file.index.markUnreadable(position);
          this.warnOnce(file.path, problem, 'metrics history: damaged series of a segment file skipped');
        });
        return;
      } catch (error) {
        // Read again without it: what the other files decoded is cached by now.
        if (!(error instanceof DamagedFile)) throw error;
        this.drop(error.path, error);
        overlapping = overlapping.filter((file) => file.path !== error.path);
      }
    }
  }

  /** The series of the files overlapping [fromSec, toSec] that `wantsMetric` accepts, from the indexes. */
  async seriesIn(
    fromSec: number,
    toSec: number,
    wantsMetric: (metricIndex: number) => boolean,
    into: Map<string, SeriesInfo>,
  ): Promise<void> {
    for (const file of this.overlapping(fromSec, toSec)) {
      let index: SegmentIndex;
      try {
        index = await this.indexOf(file.path);
      } catch {
        continue; // `read` logs and drops it
      }
      index.series.forEach((series, position) => {
        if (series !== undefined && index.readable(position) && wantsMetric(series.metricIndex))
          into.set(series.key, series);
      });
    }
  }

  private overlapping(fromSec: number, toSec: number): SealedFile[] {
    return this.files.filter((file) => file.startSec + this.windowSec > fromSec && file.startSec <= toSec);
  }

  private async indexOf(path: string): Promise<SegmentIndex> {
    let index = this.indexCache.get(path);
    if (index !== undefined) {
      this.indexCache.delete(path);
      this.indexCache.set(path, index);
      return index;
    }
    index = await readSegmentIndexAsync(path, this.tables);
    // Unless the file left the tier while its index was read.
    if (this.files.some((file) => file.path === path)) this.remember(path, index);
    return index;
  }

  /** Caches a parsed index as the most recently used, dropping the least recently used beyond the bounds. */
  private remember(path: string, index: SegmentIndex): void {
    this.forgetIndex(path);
    this.indexCache.set(path, index);
    this.indexCacheBytes += index.byteLength;
    for (const oldest of this.indexCache.keys()) {
      if (this.indexCache.size <= INDEX_CACHE_SIZE && this.indexCacheBytes <= INDEX_CACHE_BYTES) break;
      if (oldest !== path) this.forgetIndex(oldest);
    }
  }

  private forgetIndex(path: string): void {
    const index = this.indexCache.get(path);
    if (index === undefined) return;
    this.indexCache.delete(path);
    this.indexCacheBytes -= index.byteLength;
  }

  private forget(path: string): void {
    this.forgetIndex(path);
    this.decoded.dropFile(path);
  }

  /**
   * Drops a damaged file from the tier (left on disk) with one log line. A file that already left
   * the tier (retention deleted it while a query read it) is not damaged: nothing is logged.
   */
  private drop(path: string, error: unknown): void {
    const at = this.files.findIndex((file) => file.path === path);
    if (at < 0) return;
    this.files.splice(at, 1);
    this.forget(path);
    this.skip(path, error);
  }

  private skip(path: string, error: unknown): void {
    this.warnOnce(path, (error as Error).message, 'metrics history: damaged segment file skipped');
  }

  /**
   * One warning per damaged file: a file whose damaged series are skipped is read again by later
   * queries (its index may even be parsed again), and says nothing new.
   */
  private warnOnce(path: string, problem: string, message: string): void {
    if (this.warned.has(path)) return;
    this.warned.add(path);
    this.logger.warn({ file: path, problem }, message);
  }
}
