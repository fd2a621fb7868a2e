import { readFileSync } from 'node:fs';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { writeAllTo } from './atomic-file.js';
import { ByteReader, ByteWriter } from './byte-buffer.js';
import { frameLogRecord, scanLog, type DamagedSpan } from './log-frame.js';
import { KIND_COLUMNS, type SeriesInfo } from './series-kind.js';
import { encodeSeriesTable, SeriesTables } from './series-table.js';

/**
 * The write-ahead log of a tier's open window (`<window start>.wal`): one record per flushed step,
 * appended with a single write (framing: log-frame.ts). A record stands alone: the step time, the
 * series table of its points (series-table.ts: names and labels, each string once) and per series
 * its column count and values. So a record after a damaged one reads as well as any other: damage
 * loses the records it touches and nothing else. The window's chunks are rebuilt from it after a
 * restart.
 */

/** One point of a flushed step: its series and its column values. */
export interface LoggedPoint {
  series: SeriesInfo;
  values: readonly number[];
}

export interface LoggedStep {
  /** Step start, Unix seconds. */
  stepSec: number;
  points: LoggedPoint[];
}

/** The window a log belongs to, seconds: a record whose step is not one of its steps is damaged. */
export interface LogWindow {
  startSec: number;
  stepSec: number;
  windowSec: number;
}

export interface ReadLog {
  steps: LoggedStep[];
  /** The intact records' framed bytes, in file order: what a damaged log is rewritten with. */
  records: Uint8Array[];
  /** Spans without an intact record, and records that do not decode, in file order. */
  damaged: DamagedSpan[];
  /** Bytes of the file as read. */
  byteLength: number;
}

/**
 * Reads a window log; a missing file reads as empty. Damaged bytes are reported in `damaged` and
 * the records around them kept; throws only when the file cannot be read (not a file, permissions).
 * Synchronous, for start-up only (loading a tier); `readWindowLogAsync` once the server runs.
 */
export function readWindowLog(path: string, window: LogWindow): ReadLog {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    return parseWindowLog(emptyIfMissing(error), window);
  }
  return parseWindowLog(bytes, window);
}

/** `readWindowLog` through the thread pool. */
export async function readWindowLogAsync(path: string, window: LogWindow): Promise<ReadLog> {
  const bytes = await readFile(path).catch(emptyIfMissing);
  return parseWindowLog(bytes, window);
}

function emptyIfMissing(error: unknown): Uint8Array {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Uint8Array(0);
  throw error;
}

/** The steps of a window log's bytes (see `readWindowLog`). */
function parseWindowLog(bytes: Uint8Array, window: LogWindow): ReadLog {
  const result: ReadLog = { steps: [], records: [], damaged: [], byteLength: bytes.length };
  const scanned = scanLog(bytes);
  result.damaged = scanned.damaged;
  // Consecutive records mostly carry the same series table: each distinct one is parsed once.
  const tables = new SeriesTables(2);
  for (const record of scanned.records) {
    try {
      result.steps.push(decodeStep(record.payload, window, tables));
      result.records.push(bytes.subarray(record.start, record.end));
    } catch {
      // A good checksum over content this reader does not accept (a step outside the window).
      result.damaged.push({ from: record.start, to: record.end });
    }
  }
  result.damaged.sort((a, b) => a.from - b.from);
  return result;
}

/** One record's step; points of series whose metric is no longer in the catalog are dropped. */
function decodeStep(payload: Uint8Array, window: LogWindow, tables: SeriesTables): LoggedStep {
  const reader = new ByteReader(payload);
  const stepSec = reader.varint();
  const offset = stepSec - window.startSec;
  if (offset < 0 || offset >= window.windowSec || offset % window.stepSec !== 0)
    throw new RangeError(`step ${stepSec} is not a step of the window`);
  const series = tables.decode(reader.bytesField());
  const points: LoggedPoint[] = [];
  for (const info of series) {
    const columns = reader.u8();
    const values: number[] = [];
    for (let c = 0; c < columns; c++) values.push(reader.f64());
    if (info === undefined) continue;
    if (columns !== KIND_COLUMNS[info.kind].length) throw new RangeError('column count of the kind');
    points.push({ series: info, values });
  }
  if (!reader.done) throw new RangeError('bytes after the last point');
  return { stepSec, points };
}

/**
 * Appends step records to a window log, through the thread pool (the caller runs one operation at
 * a time). The file is opened for appending at the first record; a failed open is tried again at
 * the next one.
 */
export class WindowLogWriter {
  private readonly path: string;
  private handle: FileHandle | undefined;
  private bytes: number;
  /** The series of the last record and their encoded table: reused while the series stay the same. */
  private tableSeries: readonly SeriesInfo[] = [];
  private table: Uint8Array = encodeSeriesTable([]);

  /** `byteLength`: the log's size now (0 for a new one). */
  constructor(path: string, byteLength: number) {
    this.path = path;
    this.bytes = byteLength;
  }

  get byteLength(): number {
    return this.bytes;
  }

  /**
   * Writes one step with one write call: a crash leaves either the whole record or a torn one
   * that the next start skips. No fsync: a killed process loses nothing the kernel has; a power
   * loss may lose the last records, which the checksums then detect.
   */
  async appendStep(stepSec: number, points: readonly LoggedPoint[]): Promise<void> {
    const body = new ByteWriter(64 + points.length * 20);
    body.varint(stepSec);
    body.bytesField(this.tableOf(points));
    for (const { values } of points) {
      body.u8(values.length);
      for (const value of values) body.f64(value);
    }
    const framed = frameLogRecord(body.finish());
    this.handle ??= await open(this.path, 'a', 0o600);
    // The file's own size, not a count of our writes: it may have been cut or grown from outside.
    const before = (await this.handle.stat()).size;
    try {
      await writeAllTo(this.handle, framed);
    } catch (error) {
      // Cut a partial record off (the next start would skip it anyway, with a warning).
      await this.handle.truncate(before);
      throw error;
    }
    this.bytes = before + framed.length;
  }

  /** The encoded series table of `points` (the last one when they have the same series in the same order). */
  private tableOf(points: readonly LoggedPoint[]): Uint8Array {
    const last = this.tableSeries;
    if (last.length === points.length && points.every((point, i) => point.series === last[i]))
      return this.table;
    this.tableSeries = points.map((point) => point.series);
    this.table = encodeSeriesTable(this.tableSeries);
    return this.table;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }
}
