import { closeSync, ftruncateSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { METRIC_INDEX, CATALOG } from '../store/index.js';
import { ByteReader, ByteWriter } from './byte-buffer.js';
import { frameRecord, scanRecords } from './record-frame.js';
import { describeSeries, KIND_COLUMNS, type SeriesInfo } from './series-kind.js';

/**
 * The write-ahead log of a tier's open window (`<window start>.wal`): one record per flushed step,
 * appended with a single write. A record holds the step time, the series first seen in this file
 * (defined once, then referred to by number) and one point per series that had samples. The
 * window's chunks are rebuilt from it after a restart; a torn last record is cut off.
 */

/** One point of a flushed step: series reference in this log and its column values. */
export interface LoggedPoint {
  series: SeriesInfo;
  values: readonly number[];
}

export interface LoggedStep {
  /** Step start, Unix seconds. */
  stepSec: number;
  points: LoggedPoint[];
}

export interface ReadLog {
  steps: LoggedStep[];
  /** Series defined in the file, by reference number. */
  series: SeriesInfo[];
  /** Bytes of intact records; the file is cut to this length before appending again. */
  intactBytes: number;
  problem: string | undefined;
  /** Points of series whose metric is no longer in the catalog (dropped). */
  unknownPoints: number;
}

/** Reads a window log; a missing file reads as empty. Never throws for bad content. */
export function readWindowLog(path: string): ReadLog {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { steps: [], series: [], intactBytes: 0, problem: undefined, unknownPoints: 0 };
    }
    throw error;
  }
  const scanned = scanRecords(bytes);
  const result: ReadLog = {
    steps: [],
    series: [],
    intactBytes: scanned.intactBytes,
    problem: scanned.problem,
    unknownPoints: 0,
  };
  let offset = 0;
  for (const payload of scanned.payloads) {
    try {
      result.steps.push(decodeStep(payload, result));
    } catch (error) {
      // A record with a good checksum but bad content: written by a different version. Stop here.
      result.problem = `undecodable record after byte ${offset}: ${(error as Error).message}`;
      result.intactBytes = offset;
      break;
    }
    offset += payload.length + 8;
  }
  return result;
}

function decodeStep(payload: Uint8Array, log: ReadLog): LoggedStep {
  const reader = new ByteReader(payload);
  const stepSec = reader.varint();
  const definitions = reader.varint();
  for (let i = 0; i < definitions; i++) {
    const name = reader.string();
    const labelCount = reader.varint();
    const labels: string[] = [];
    for (let l = 0; l < labelCount; l++) labels.push(reader.string());
    const metricIndex = METRIC_INDEX.get(name) ?? -1;
    log.series.push(describeSeries(metricIndex, labels));
  }
  const count = reader.varint();
  const points: LoggedPoint[] = [];
  for (let i = 0; i < count; i++) {
    const series = log.series[reader.varint()];
    if (series === undefined) throw new RangeError('point of an undefined series');
    const values: number[] = [];
    for (let c = 0; c < KIND_COLUMNS[series.kind].length; c++) values.push(reader.f64());
    if (series.metricIndex < 0) log.unknownPoints++;
    else points.push({ series, values });
  }
  return { stepSec, points };
}

/** Appends step records to a window log; knows which series the file already defines. */
export class WindowLogWriter {
  private readonly fd: number;
  private readonly refs = new Map<string, number>();
  private bytes: number;

  /** Opens `path` for appending after cutting it to `intactBytes` (drops a torn tail). */
  constructor(path: string, existing: ReadLog | undefined) {
    if (existing !== undefined && existing.problem !== undefined) truncateSync(path, existing.intactBytes);
    this.fd = openSync(path, 'a', 0o600);
    this.bytes = existing?.intactBytes ?? 0;
    existing?.series.forEach((series, ref) => this.refs.set(series.key, ref));
  }

  get byteLength(): number {
    return this.bytes;
  }

  /**
   * Writes one step with one write call: a crash leaves either the whole record or a torn one
   * that the next start detects. No fsync: a killed process loses nothing the kernel has; a power
   * loss may lose the last records, which the checksums then detect.
   */
  appendStep(stepSec: number, points: readonly LoggedPoint[]): void {
    const body = new ByteWriter(64 + points.length * 20);
    body.varint(stepSec);
    // New references take effect only once the record is written (a failed write defines nothing).
    const fresh: SeriesInfo[] = [];
    const freshRefs = new Map<string, number>();
    for (const { series } of points) {
      if (this.refs.has(series.key) || freshRefs.has(series.key)) continue;
      freshRefs.set(series.key, this.refs.size + fresh.length);
      fresh.push(series);
    }
    body.varint(fresh.length);
    for (const series of fresh) {
      body.string(CATALOG[series.metricIndex]!.name);
      body.varint(series.labelValues.length);
      for (const value of series.labelValues) body.string(value);
    }
    body.varint(points.length);
    for (const { series, values } of points) {
      body.varint(this.refs.get(series.key) ?? freshRefs.get(series.key)!);
      for (const value of values) body.f64(value);
    }
    const framed = frameRecord(body.finish());
    try {
      let written = 0;
      while (written < framed.length) written += writeSync(this.fd, framed, written);
    } catch (error) {
      // Cut a partial record off, so the records appended after it stay readable.
      ftruncateSync(this.fd, this.bytes);
      throw error;
    }
    this.bytes += framed.length;
    for (const [key, ref] of freshRefs) this.refs.set(key, ref);
  }

  close(): void {
    closeSync(this.fd);
  }
}
