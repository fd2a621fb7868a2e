import { BitReader, BitWriter } from './bit-stream.js';

/**
 * Compression of one series' points in one window of a tier (a chunk), in the spirit of Gorilla
 * (Pelkonen et al., VLDB 2015) and VictoriaMetrics:
 *
 * - Times are step numbers relative to the window start. The first point's step is written as
 *   is; each later one as delta-of-delta of the step gaps, so a series with a point every step
 *   costs one bit per point.
 * - Values are decimals: the API answers at most 3 decimals (SPEC §5.2), so a value is kept as the
 *   integer `round(v · scale)`, scale 1 when the column's first value is integral, else 1000
 *   (lossless for every figure the API shows). Each value is written as the residual against a
 *   prediction in zig-zag buckets: gauges predict "same as before" (one bit for a flat line),
 *   counters "same increase as before" (one bit for a steady rate). Integral floats of any
 *   magnitude up to 2^53 are exact; a value that does not fit (huge, or a fraction in a scale-1
 *   column) is written raw as float64 behind an escape code, never rounded.
 *
 * The encoder lives in memory for the open window and appends a few bits per point; the bytes
 * are written to disk when the window is sealed.
 */

/** How a column predicts its next value. */
export type ColumnPrediction = 'hold' | 'rate';

const TWO_32 = 2 ** 32;

/** Running state of one value column, shared in shape by encoder and decoder so both stay in step. */
class ColumnState {
  scale = 0;
  previous = Number.NaN;
  delta = 0;
  constructor(readonly prediction: ColumnPrediction) {}

  predict(): number {
    return this.prediction === 'rate' ? this.previous + this.delta : this.previous;
  }

  /** After a value `q` (its scaled integer, or NaN when not representable) is known. */
  advance(q: number): void {
    this.delta = Number.isNaN(q) || Number.isNaN(this.previous) ? 0 : q - this.previous;
    this.previous = q;
  }

  /**
   * After a value written raw: a fraction in an integral column switches it to 3 decimals for good,
   * so a column whose first values happened to be integral pays the escape once, not every time.
   */
  rescale(value: number): void {
    if (this.scale === 1 && !Number.isInteger(value) && Number.isFinite(value)) {
      this.scale = 1000;
      this.previous = Number.NaN;
    }
  }

  /** The scaled integer of `value`, or NaN when it is not exactly representable at this scale. */
  scaled(value: number): number {
    const q = Math.round(value * this.scale);
    if (!Number.isSafeInteger(q)) return Number.NaN;
    if (this.scale === 1 && q !== value) return Number.NaN;
    return q;
  }
}

export class ChunkEncoder {
  private readonly bits = new BitWriter();
  private readonly columns: ColumnState[];
  private lastStep = -1;
  private lastGap = 1;
  private count = 0;
  /** Step number of the first point (window-relative). */
  firstStep = -1;

  constructor(predictions: readonly ColumnPrediction[]) {
    this.columns = predictions.map((prediction) => new ColumnState(prediction));
  }

  get pointCount(): number {
    return this.count;
  }

  get lastStepIndex(): number {
    return this.lastStep;
  }

  /** Bytes held in memory (for accounting). */
  get memoryBytes(): number {
    return this.bits.capacityBytes + 64 + this.columns.length * 48;
  }

  /**
   * Appends a point at window-relative step `step` (strictly after the previous one; an older or
   * equal step is ignored and `false` returned). `values` has one finite number per column.
   */
  append(step: number, values: ArrayLike<number>): boolean {
    if (step <= this.lastStep) return false;
    if (this.count === 0) {
      this.firstStep = step;
    } else {
      const gap = step - this.lastStep;
      writeSigned(this.bits, gap - this.lastGap);
      this.lastGap = gap;
    }
    this.lastStep = step;
    for (let c = 0; c < this.columns.length; c++) this.writeValue(this.columns[c]!, values[c]!);
    this.count++;
    return true;
  }

  /** The encoded bits so far (a copy) and their length. */
  snapshot(): { bytes: Uint8Array; bitLength: number } {
    return { bytes: this.bits.toBytes(), bitLength: this.bits.bitLength };
  }

  private writeValue(column: ColumnState, value: number): void {
    if (column.scale === 0) {
      column.scale = Number.isInteger(value) ? 1 : 1000;
      this.bits.write(column.scale === 1 ? 0 : 1, 1);
      this.bits.writeFloat64(value);
      column.advance(column.scaled(value));
      return;
    }
    const q = column.scaled(value);
    const predicted = column.predict();
    const residual = q - predicted;
    if (Number.isNaN(residual) || !writeSignedBucket(this.bits, residual)) {
      writeEscape(this.bits);
      this.bits.writeFloat64(value);
      column.rescale(value);
      column.advance(column.scaled(value));
      return;
    }
    column.advance(q);
  }
}

/** A decoded chunk: window-relative steps and one value array per column. */
export interface DecodedChunk {
  steps: Int32Array;
  columns: Float64Array[];
}

/** Decodes `count` points of a chunk written by `ChunkEncoder`; throws on corrupt input. */
export function decodeChunk(
  bytes: Uint8Array,
  bitLength: number,
  count: number,
  firstStep: number,
  predictions: readonly ColumnPrediction[],
): DecodedChunk {
  const reader = new BitReader(bytes, bitLength);
  const states = predictions.map((prediction) => new ColumnState(prediction));
  const steps = new Int32Array(count);
  const columns = predictions.map(() => new Float64Array(count));
  let step = firstStep;
  let gap = 1;
  for (let i = 0; i < count; i++) {
    if (i > 0) {
      gap += readSigned(reader);
      step += gap;
    }
    steps[i] = step;
    for (let c = 0; c < states.length; c++) columns[c]![i] = readValue(reader, states[c]!);
  }
  return { steps, columns };
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

/**
 * Zig-zag buckets, a unary prefix then the value: `0` (zero), `10`+6, `110`+10, `1110`+14, `11110`+20,
 * `111110`+27, `1111110`+34, `11111110`+53 bits; eight ones are the escape (a raw float64 follows).
 * Small residuals (jitter, noise at 3 decimals) get fine steps, large ones coarse steps.
 */
const BUCKET_BITS = [0, 6, 10, 14, 20, 27, 34, 53] as const;
const ESCAPE_ONES = BUCKET_BITS.length;

/** Writes a residual; `false` when it does not fit the largest bucket (the caller escapes). */
function writeSignedBucket(bits: BitWriter, value: number): boolean {
  const z = value >= 0 ? value * 2 : -value * 2 - 1;
  if (z === 0) {
    bits.write(0, 1);
    return true;
  }
  for (let ones = 1; ones < BUCKET_BITS.length; ones++) {
    const width = BUCKET_BITS[ones]!;
    if (z >= 2 ** width) continue;
    // `ones` one bits and a zero.
    bits.write(((1 << ones) - 1) << 1, ones + 1);
    if (width > 32) {
      bits.write(Math.floor(z / TWO_32), width - 32);
      bits.write(z % TWO_32, 32);
    } else bits.write(z, width);
    return true;
  }
  return false;
}

function writeEscape(bits: BitWriter): void {
  bits.write((1 << ESCAPE_ONES) - 1, ESCAPE_ONES);
}

/** The residual, or `undefined` for the escape code (a raw float64 follows). */
function readSignedBucket(reader: BitReader): number | undefined {
  const ones = reader.readOnes(ESCAPE_ONES);
  if (ones === ESCAPE_ONES) return undefined;
  const width = BUCKET_BITS[ones]!;
  const z = width > 32 ? reader.read(width - 32) * TWO_32 + reader.read(32) : reader.read(width);
  return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
}

/** Step gaps: the same buckets; a gap never needs the escape (windows are short). */
function writeSigned(bits: BitWriter, value: number): void {
  if (!writeSignedBucket(bits, value)) throw new RangeError(`step gap change ${value} out of range`);
}

function readSigned(reader: BitReader): number {
  const value = readSignedBucket(reader);
  if (value === undefined) throw new RangeError('corrupt step gap');
  return value;
}
