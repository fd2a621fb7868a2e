import { METRIC_INDEX } from '../store/index.js';
import { BitReader } from './bit-stream.js';
import type { ByteReader } from './byte-buffer.js';
import type { ColumnPrediction } from './column-codec.js';
import { describeSeries, KIND_COLUMNS, type SeriesInfo } from './series-kind.js';
import type { DecodedValues } from './series-chunk.js';

/**
 * Reading sealed windows of format 1 (written before the columnar layout of format 2, see
 * docs/history.md, File formats): they load and answer queries until their retention deletes
 * them; nothing writes them any more. Format 1 has an index with every series' name and labels
 * and one chunk per series with the points' steps and values interleaved: steps as
 * delta-of-delta, values as scaled integers (×1 or ×1000) written as residuals against a
 * prediction in zig-zag buckets of 0, 6, 10, 14, 20, 27, 34 or 53 bits behind a unary prefix, or
 * a raw float64 behind eight ones.
 */
export interface SegmentEntryV1 {
  format: 1;
  series: SeriesInfo;
  firstStep: number;
  count: number;
  bitLength: number;
  /** Byte offset of the chunk in the file. */
  offset: number;
  length: number;
  crc: number;
}

/** The series entries of a format-1 index, read after its version byte, step and window start. */
export function decodeIndexV1(reader: ByteReader, dataStart: number): Map<string, SegmentEntryV1> {
  const count = reader.varint();
  const entries = new Map<string, SegmentEntryV1>();
  for (let i = 0; i < count; i++) {
    const name = reader.string();
    const labelCount = reader.varint();
    const labels: string[] = [];
    for (let l = 0; l < labelCount; l++) labels.push(reader.string());
    const firstStep = reader.varint();
    const points = reader.varint();
    const bitLength = reader.varint();
    const offset = dataStart + reader.varint();
    const length = reader.varint();
    const crc = reader.u32();
    const metricIndex = METRIC_INDEX.get(name);
    // A metric no longer in the catalog is skipped; its chunk is never read.
    if (metricIndex === undefined) continue;
    const series = describeSeries(metricIndex, labels);
    entries.set(series.key, { format: 1, series, firstStep, count: points, bitLength, offset, length, crc });
  }
  return entries;
}

/** The steps and first column of a format-1 chunk (`bytes`: exactly its stored bytes). */
export function decodeChunkV1(entry: SegmentEntryV1, bytes: Uint8Array): DecodedValues {
  const reader = new BitReader(bytes, entry.bitLength);
  const states = KIND_COLUMNS[entry.series.kind].map((prediction) => new ColumnState(prediction));
  const steps = new Int32Array(entry.count);
  const values = new Float64Array(entry.count);
  let step = entry.firstStep;
  let gap = 1;
  for (let i = 0; i < entry.count; i++) {
    if (i > 0) {
      const change = readSignedBucket(reader);
      if (change === undefined) throw new RangeError('corrupt step gap');
      gap += change;
      step += gap;
    }
    steps[i] = step;
    for (let c = 0; c < states.length; c++) {
      const value = readValue(reader, states[c]!);
      if (c === 0) values[i] = value;
    }
  }
  return { steps, values };
}

/** Running state of one value column. */
class ColumnState {
  scale = 0;
  previous = Number.NaN;
  delta = 0;
  constructor(readonly prediction: ColumnPrediction) {}

  predict(): number {
    return this.prediction === 'rate' ? this.previous + this.delta : this.previous;
  }

  advance(q: number): void {
    this.delta = Number.isNaN(q) || Number.isNaN(this.previous) ? 0 : q - this.previous;
    this.previous = q;
  }

  /** After a raw value: a fraction in an integral column switches it to 3 decimals for good. */
  rescale(value: number): void {
    if (this.scale === 1 && !Number.isInteger(value) && Number.isFinite(value)) {
      this.scale = 1000;
      this.previous = Number.NaN;
    }
  }

  scaled(value: number): number {
    const q = Math.round(value * this.scale);
    if (!Number.isSafeInteger(q)) return Number.NaN;
    if (this.scale === 1 && q !== value) return Number.NaN;
    return q;
  }
}

function readValue(reader: BitReader, column: ColumnState): number {
  if (column.scale === 0) {
    column.scale = reader.readBit() === 0 ? 1 : 1000;
    const value = reader.readFloat64();
    column.advance(column.scaled(value));
    return value;
  }
  const residual = readSignedBucket(reader);
  if (residual === undefined) {
    const value = reader.readFloat64();
    column.rescale(value);
    column.advance(column.scaled(value));
    return value;
  }
  const q = column.predict() + residual;
  column.advance(q);
  return q / column.scale;
}

const BUCKET_BITS = [0, 6, 10, 14, 20, 27, 34, 53] as const;
const ESCAPE_ONES = BUCKET_BITS.length;
const TWO_32 = 2 ** 32;

/** The residual, or `undefined` for the escape code (a raw float64 follows). */
function readSignedBucket(reader: BitReader): number | undefined {
  const ones = reader.readOnes(ESCAPE_ONES);
  if (ones === ESCAPE_ONES) return undefined;
  const width = BUCKET_BITS[ones]!;
  const z = width > 32 ? reader.read(width - 32) * TWO_32 + reader.read(32) : reader.read(width);
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}
