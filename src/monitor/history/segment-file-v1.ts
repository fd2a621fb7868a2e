import { METRIC_INDEX } from '../store/index.js';
import { BitReader } from './bit-stream.js';
import type { ByteReader } from './byte-buffer.js';
import type { ColumnPrediction } from './column-codec.js';
import { describeSeries, KIND_COLUMNS, type SeriesInfo } from './series-kind.js';
import type { DecodedValues } from './series-chunk.js';
import {
  COUNT,
  FIELDS,
  FIRST_STEP,
  FLAG_READABLE,
  FLAGS,
  OFFSET,
  STEPS_CRC,
  STEPS_LENGTH,
  VALUES_LENGTH,
} from './segment-index.js';

/**
 * Reading sealed windows of format 1 (written before the columnar layout of format 2, see
 * docs/history.md, File formats): they load and answer queries until their retention deletes
 * them; nothing writes them any more. Format 1 has an index with every series' name and labels
 * and one chunk per series with the points' steps and values interleaved: steps as
 * delta-of-delta, values as scaled integers (×1 or ×1000) written as residuals against a
 * prediction in zig-zag buckets of 0, 6, 10, 14, 20, 27, 34 or 53 bits behind a unary prefix, or
 * a raw float64 behind eight ones.
 */
/** The series rows of a format-1 index (segment-index.ts), read after its version byte, step and window start. */
export function decodeIndexV1(
  reader: ByteReader,
  dataStart: number,
): { series: (SeriesInfo | undefined)[]; rows: Uint32Array } {
  const count = reader.varint();
  const series: (SeriesInfo | undefined)[] = [];
  const rows = new Uint32Array(count * FIELDS);
  for (let position = 0, row = 0; position < count; position++, row += FIELDS) {
    const name = reader.string();
    const labelCount = reader.varint();
    const labels: string[] = [];
    for (let l = 0; l < labelCount; l++) labels.push(reader.string());
    rows[row + FIRST_STEP] = reader.varint();
    rows[row + COUNT] = reader.varint();
    rows[row + VALUES_LENGTH] = reader.varint(); // bits of the chunk
    rows[row + OFFSET] = dataStart + reader.varint();
    rows[row + STEPS_LENGTH] = reader.varint(); // bytes of the chunk
    rows[row + STEPS_CRC] = reader.u32();
    const metricIndex = METRIC_INDEX.get(name);
    // A metric no longer in the catalog is skipped; its chunk is never read.
    series.push(metricIndex === undefined ? undefined : describeSeries(metricIndex, labels));
    rows[row + FLAGS] = metricIndex === undefined ? 0 : FLAG_READABLE;
  }
  return { series, rows };
}

/**
 * The steps (window-relative) and first column of the format-1 chunk of `series`, which holds
 * `count` points from `firstStep` in `bitLength` bits of `bytes` (exactly its stored bytes).
 */
export function decodeChunkV1(
  series: SeriesInfo,
  firstStep: number,
  count: number,
  bitLength: number,
  bytes: Uint8Array,
): DecodedValues {
  const reader = new BitReader(bytes, bitLength);
  const states = KIND_COLUMNS[series.kind].map((prediction) => new ColumnState(prediction));
  const steps = new Int32Array(count);
  const values = new Float64Array(count);
  let step = firstStep;
  let gap = 1;
  for (let i = 0; i < count; i++) {
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
