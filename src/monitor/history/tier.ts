import { readdirSync, rmSync, statSync } from 'node:fs';
import { makeDirectorySync } from '../../persistence/make-dir.js';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ChunkEncoder, decodeChunk } from './chunk-codec.js';
import { DecodedCache, type DecodedValues } from './decoded-cache.js';
import {
  readChunks,
  readSegmentIndex,
  writeSegment,
  type SegmentEntry,
  type SegmentIndex,
} from './segment-file.js';
import { KIND_COLUMNS, type SeriesInfo } from './series-kind.js';
import { readWindowLog, WindowLogWriter, type LoggedPoint } from './window-log.js';

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

/** The points of one series from one window: step `steps[i]` starts at `startSec + steps[i] · stepSec`. */
export interface TierPiece extends DecodedValues {
  startSec: number;
  stepSec: number;
}

/** Points of one series read from a tier, as pieces oldest first (shared with the cache: read only). */
export interface TierSeries {
  series: SeriesInfo;
  pieces: TierPiece[];
}

interface SealedFile {
  startSec: number;
  path: string;
  bytes: number;
}

/** Indexes of sealed files kept parsed, per tier: a chart's repeated range reads them again. */
const INDEX_CACHE_SIZE = 64;
/** Decoded chunks kept per tier, bytes (a year of hourly points of 100 series takes about 11 MiB). */
const DECODED_CACHE_BYTES = 32 << 20;

/**
 * One tier of the history: points of every series at a fixed step, in files of one window each.
 * The open window's chunks are in memory (a few bits per point) and its points in a write-ahead
 * log; a window that ends is sealed into a compressed segment file. Retention deletes whole files.
 * All file I/O is synchronous: one small append per step, one segment write per window, and reads
 * of a few chunks per query (see docs/metrics.md, History).
 */
export class Tier {
  readonly options: TierOptions;
  private readonly dir: string;
  private readonly logger: Logger;
  private readonly sealed: SealedFile[] = [];
  private readonly indexCache = new Map<string, SegmentIndex>();
  private readonly decoded = new DecodedCache(DECODED_CACHE_BYTES);
  private openStartSec = -1;
  private openChunks = new Map<string, { series: SeriesInfo; encoder: ChunkEncoder }>();
  private log: WindowLogWriter | undefined;
  private newestStep = -1;

  constructor(root: string, options: TierOptions, logger: Logger) {
    this.options = options;
    this.dir = join(root, options.name);
    this.logger = logger.child({ tier: options.name });
    makeDirectorySync(this.dir, 0o700);
  }

  /** Start time of the newest point, Unix seconds; -1 when the tier is empty. */
  get newestStepSec(): number {
    return this.newestStep;
  }

  /** Loads the files: sealed windows by name, the newest log as the open window (older logs are sealed). */
  load(): void {
    const logs: number[] = [];
    for (const name of readdirSync(this.dir)) {
      const match = /^(\d+)\.(seg|wal)$/.exec(name);
      if (match === null) {
        // A temporary file of a segment write that did not finish.
        if (name.endsWith('.tmp')) rmSync(join(this.dir, name), { force: true });
        continue;
      }
      const startSec = Number(match[1]);
      if (match[2] === 'wal') logs.push(startSec);
      else this.loadSealed(startSec, join(this.dir, name));
    }
    this.sealed.sort((a, b) => a.startSec - b.startSec);
    logs.sort((a, b) => a - b);
    for (const startSec of logs) {
      // A log whose segment exists was sealed just before a crash; the segment is complete.
      if (this.sealed.some((file) => file.startSec === startSec))
        rmSync(this.logPath(startSec), { force: true });
      else this.openLog(startSec);
    }
    const newestSealed = this.sealed.at(-1);
    if (this.newestStep < 0 && newestSealed !== undefined) {
      this.newestStep = newestSealed.startSec + this.options.windowSec - this.options.stepSec;
    }
  }

  /**
   * Appends the points of one step (start `stepSec`). A step at or before the newest one (the clock
   * went back) is ignored. Returns whether it was kept.
   */
  appendStep(stepSec: number, points: readonly LoggedPoint[]): boolean {
    if (stepSec <= this.newestStep) return false;
    const windowStart = stepSec - (stepSec % this.options.windowSec);
    if (windowStart !== this.openStartSec) {
      this.seal();
      this.openLog(windowStart);
    }
    this.log!.appendStep(stepSec, points);
    this.addToChunks(stepSec, points);
    this.newestStep = stepSec;
    return true;
  }

  /** Deletes sealed files entirely older than the retention. Returns the bytes freed. */
  dropExpired(nowSec: number): number {
    let freed = 0;
    while (this.sealed.length > 0) {
      const oldest = this.sealed[0]!;
      if (oldest.startSec + this.options.windowSec > nowSec - this.options.retentionSec) break;
      freed += this.deleteOldest();
    }
    return freed;
  }

  /** Start of the oldest sealed file, or undefined. */
  get oldestSealedSec(): number | undefined {
    return this.sealed[0]?.startSec;
  }

  /** Deletes the oldest sealed file (size cap). Returns its bytes. */
  deleteOldest(): number {
    const oldest = this.sealed.shift();
    if (oldest === undefined) return 0;
    rmSync(oldest.path, { force: true });
    this.indexCache.delete(oldest.path);
    this.decoded.dropFile(oldest.path);
    return oldest.bytes;
  }

  /** Bytes on disk: sealed files and the open log. */
  get diskBytes(): number {
    let bytes = this.log?.byteLength ?? 0;
    for (const file of this.sealed) bytes += file.bytes;
    return bytes;
  }

  /** Bytes held by the open window's chunks (memory accounting). */
  get openChunkBytes(): number {
    let bytes = 0;
    for (const { encoder } of this.openChunks.values()) bytes += encoder.memoryBytes;
    return bytes;
  }

  /** Series with a chunk in the open window (they are kept alive until it is sealed). */
  hasOpenChunk(key: string): boolean {
    return this.openChunks.has(key);
  }

  /**
   * The windows overlapping [fromSec, toSec] of the series accepted by `wants`, oldest first
   * (whole windows: the caller picks its points). A damaged sealed file is skipped with one log line.
   */
  read(wants: (series: SeriesInfo) => boolean, fromSec: number, toSec: number): Map<string, TierSeries> {
    const result = new Map<string, TierSeries>();
    for (const file of this.sealed) {
      if (file.startSec + this.options.windowSec <= fromSec || file.startSec > toSec) continue;
      this.readSealed(file, wants, result);
    }
    if (this.openStartSec >= 0 && this.openStartSec <= toSec) {
      for (const { series, encoder } of this.openChunks.values()) {
        if (!wants(series)) continue;
        const { bytes, bitLength } = encoder.snapshot();
        const chunk = decodeChunk(
          bytes,
          bitLength,
          encoder.pointCount,
          encoder.firstStep,
          KIND_COLUMNS[series.kind],
        );
        addPiece(result, series, this.openStartSec, this.options.stepSec, {
          steps: chunk.steps,
          values: chunk.columns[0]!,
        });
      }
    }
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
    for (const file of this.sealed) {
      if (file.startSec + this.options.windowSec <= fromSec || file.startSec > toSec) continue;
      let index: SegmentIndex;
      try {
        index = this.indexOf(file.path);
      } catch {
        continue;
      }
      for (const { series } of index.entries.values())
        if (wantsMetric(series.metricIndex)) into.set(series.key, series);
    }
    if (this.openStartSec < 0 || this.openStartSec > toSec) return;
    for (const { series } of this.openChunks.values())
      if (wantsMetric(series.metricIndex)) into.set(series.key, series);
  }

  /** Seals the open window (shutdown, or a new window started). */
  seal(): void {
    if (this.log === undefined) return;
    const startSec = this.openStartSec;
    const chunks = [...this.openChunks.values()].sort((a, b) => (a.series.key < b.series.key ? -1 : 1));
    this.log.close();
    this.log = undefined;
    this.openStartSec = -1;
    this.openChunks = new Map();
    if (chunks.length > 0) {
      const path = join(this.dir, `${startSec}.seg`);
      const bytes = writeSegment(path, this.options.stepSec, startSec, chunks);
      this.sealed.push({ startSec, path, bytes });
      this.sealed.sort((a, b) => a.startSec - b.startSec);
    }
    rmSync(this.logPath(startSec), { force: true });
  }

  /** Closes the open log without sealing (shutdown: the window goes on after a restart). */
  close(): void {
    this.log?.close();
    this.log = undefined;
  }

  /** Checks a sealed file's index; a damaged one is left on disk, skipped, and logged once. */
  private loadSealed(startSec: number, path: string): void {
    try {
      readSegmentIndex(path);
      this.sealed.push({ startSec, path, bytes: statSync(path).size });
    } catch (error) {
      this.logger.warn(
        { file: path, problem: (error as Error).message },
        'metrics history: damaged segment file skipped',
      );
    }
  }

  private openLog(startSec: number): void {
    if (this.log !== undefined) this.seal();
    const path = this.logPath(startSec);
    const read = readWindowLog(path);
    if (read.problem !== undefined) {
      this.logger.warn(
        { file: path, problem: read.problem, keptBytes: read.intactBytes },
        'metrics history: torn record in the write-ahead log skipped; the points after it are lost',
      );
    }
    this.log = new WindowLogWriter(path, read);
    this.openStartSec = startSec;
    for (const step of read.steps) {
      if (step.stepSec <= this.newestStep) continue;
      this.addToChunks(step.stepSec, step.points);
      this.newestStep = step.stepSec;
    }
  }

  private addToChunks(stepSec: number, points: readonly LoggedPoint[]): void {
    const step = (stepSec - this.openStartSec) / this.options.stepSec;
    for (const { series, values } of points) {
      let open = this.openChunks.get(series.key);
      if (open === undefined) {
        open = { series, encoder: new ChunkEncoder(KIND_COLUMNS[series.kind]) };
        this.openChunks.set(series.key, open);
      }
      open.encoder.append(step, values);
    }
  }

  private readSealed(
    file: SealedFile,
    wants: (series: SeriesInfo) => boolean,
    result: Map<string, TierSeries>,
  ): void {
    try {
      const index = this.indexOf(file.path);
      const missing: SegmentEntry[] = [];
      for (const entry of index.entries.values()) {
        if (!wants(entry.series)) continue;
        const cached = this.decoded.get(`${file.path}\n${entry.series.key}`);
        if (cached === undefined) missing.push(entry);
        else addPiece(result, entry.series, file.startSec, index.stepSec, cached);
      }
      if (missing.length === 0) return;
      const chunks = readChunks(file.path, missing);
      missing.forEach((entry, i) => {
        const values = { steps: chunks[i]!.steps, values: chunks[i]!.columns[0]! };
        this.decoded.set(`${file.path}\n${entry.series.key}`, values);
        addPiece(result, entry.series, file.startSec, index.stepSec, values);
      });
    } catch (error) {
      this.logger.warn(
        { file: file.path, problem: (error as Error).message },
        'metrics history: damaged segment file skipped',
      );
      this.sealed.splice(this.sealed.indexOf(file), 1);
      this.indexCache.delete(file.path);
      this.decoded.dropFile(file.path);
    }
  }

  private indexOf(path: string): SegmentIndex {
    let index = this.indexCache.get(path);
    if (index !== undefined) {
      this.indexCache.delete(path);
      this.indexCache.set(path, index);
      return index;
    }
    index = readSegmentIndex(path);
    if (this.indexCache.size >= INDEX_CACHE_SIZE) {
      const oldest = this.indexCache.keys().next();
      if (oldest.done !== true) this.indexCache.delete(oldest.value);
    }
    this.indexCache.set(path, index);
    return index;
  }

  private logPath(startSec: number): string {
    return join(this.dir, `${startSec}.wal`);
  }
}

/** Adds one window of a series to the result (windows come oldest first). */
function addPiece(
  result: Map<string, TierSeries>,
  series: SeriesInfo,
  startSec: number,
  stepSec: number,
  decoded: DecodedValues,
): void {
  if (decoded.steps.length === 0) return;
  let target = result.get(series.key);
  if (target === undefined) {
    target = { series, pieces: [] };
    result.set(series.key, target);
  }
  target.pieces.push({ startSec, stepSec, steps: decoded.steps, values: decoded.values });
}

/** The points of `pieces` with step start in [fromSec, toSec], as plain arrays (oldest first). */
export function pointsBetween(
  pieces: readonly TierPiece[],
  fromSec: number,
  toSec: number,
): { timesSec: number[]; values: number[] } {
  const timesSec: number[] = [];
  const values: number[] = [];
  for (const piece of pieces) {
    for (let i = 0; i < piece.steps.length; i++) {
      const timeSec = piece.startSec + piece.steps[i]! * piece.stepSec;
      if (timeSec < fromSec || timeSec > toSec) continue;
      timesSec.push(timeSec);
      values.push(piece.values[i]!);
    }
  }
  return { timesSec, values };
}
