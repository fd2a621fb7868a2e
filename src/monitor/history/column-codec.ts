import { BitWriter } from './bit-stream.js';
import { PaddedCopy } from './padded-copy.js';

/**
 * Compression of one column of a series' points in one window (the steps, the mean, the max or
 * the end value), written point by point while the window is open and decoded on its own, so a
 * query decodes only the column it answers with (docs/history.md#file-formats-dirminute-dirhour).
 *
 * - Values are decimals: the API answers at most 3 decimals (docs/metrics.md#post-apiv3metrics-the-query), so a value is kept as the
 *   integer `q = round(v · scale)`, scale 1 when the column's first value is integral, else 1000.
 *   A value that is not exactly representable that way (huge, NaN, ±Infinity, −0, a fraction in a
 *   scale-1 column) is written raw as float64, never rounded; a fraction switches a scale-1 column
 *   to 3 decimals for good.
 * - Each `q` is written as the residual against a prediction ("same as before" for gauges and
 *   "same increase as before" for counters and steps), zig-zag mapped to `z ≥ 0`, in an adaptive
 *   Rice code (in the spirit of JPEG-LS, ITU-T T.87): `z = hi · 2^k + low` is written as `hi` one
 *   bits, a zero and `k` bits of `low` when `hi < 3`, else as the escape `111`, a 6-bit width and
 *   `z`. `k` follows the mean of the recent `z` (the smallest `k` with `2^k ≥ mean`), so a noisy value
 *   costs about one bit more than its noise and a flat line or a steady rate one bit per point.
 * - A run of zero residuals is a run of zero bits, so trailing zero bytes are not stored: the
 *   decoder reads bits past the stored bytes as zeros (a constant column costs only its first value).
 *
 * Why encoder and decoder stay in one file (about 300 lines): they are one format, and every
 * constant above is shared by both. Split, the constants would have to be exported, and module-local
 * constants are what V8 folds into the decoder's loop (exported ones were measurably slower in
 * `bench/history.ts`); the zero-padded copy both column decoders use is in padded-copy.ts.
 */
export type ColumnPrediction = 'hold' | 'rate';

/**
 * `k` follows 16 times the running mean of `z` (an exponentially weighted sum, weight 1/16, each `z`
 * counted up to 2^26): integer arithmetic only, and recent residuals count most, so it follows changes.
 */
const MEAN_SHIFT = 4;
const MAX_COUNTED_Z = 2 ** 26;
/** Largest `hi` written in unary; beyond, the escape. */
const MAX_HI = 2;
const ESCAPE = 0b111;
const WIDTH_BITS = 6;
/** The width code of a raw float64. */
const RAW_WIDTH = 63;
/** Widest `z` written as an integer (a safe integer has at most 53 bits). */
const MAX_WIDTH = 53;
const TWO_32 = 2 ** 32;
/** Largest Rice parameter decoded with int32 arithmetic: `hi · 2^k + low` stays below 2^31 (`hi ≤ 2`). */
const FAST_K = 28;
const POW2 = Array.from({ length: 64 }, (_, k) => 2 ** k);

/** The Rice parameter for the weighted sum `sum` (16 × the mean of `z`): the smallest `k` with 2^k ≥ mean. */
function riceParameter(sum: number): number {
  return sum <= 1 << MEAN_SHIFT ? 0 : 32 - MEAN_SHIFT - Math.clz32(sum - 1);
}

/** The weighted sum after a residual `z`. */
function nextSum(sum: number, z: number): number {
  return sum - (sum >>> MEAN_SHIFT) + (z < MAX_COUNTED_Z ? z : MAX_COUNTED_Z);
}

/** Bits of a non-negative integer below 2^53 (0 for 0). */
function bitLength(x: number): number {
  return x < TWO_32 ? 32 - Math.clz32(x) : 64 - Math.clz32(Math.floor(x / TWO_32));
}

/** The scaled integer of `value`, or NaN when it is not exactly representable at this scale. */
function scaled(value: number, scale: number): number {
  if (value === 0 && 1 / value < 0) return Number.NaN;
  const q = Math.round(value * scale);
  if (!Number.isSafeInteger(q) || (scale === 1 && q !== value)) return Number.NaN;
  return q;
}

export class ColumnEncoder {
  private readonly bits = new BitWriter(8);
  private readonly rate: boolean;
  private scale = 0;
  private previous = Number.NaN;
  private delta = 0;
  private sum = 0;

  constructor(prediction: ColumnPrediction) {
    this.rate = prediction === 'rate';
  }

  /** Bytes held in memory (for accounting). */
  get memoryBytes(): number {
    return this.bits.capacityBytes + 96;
  }

  append(value: number): void {
    if (this.scale === 0) {
      this.scale = Number.isInteger(value) ? 1 : 1000;
      this.bits.write(this.scale === 1 ? 0 : 1, 1);
      const q = scaled(value, this.scale);
      this.writeWide(Number.isNaN(q) ? Number.NaN : zigzag(q), value);
      this.advance(q);
      return;
    }
    const q = scaled(value, this.scale);
    const z = zigzag(q - (this.rate ? this.previous + this.delta : this.previous));
    if (Number.isNaN(z)) {
      this.writeWide(Number.NaN, value);
      if (this.scale === 1 && Number.isFinite(value) && !Number.isInteger(value)) {
        this.scale = 1000;
        this.advance(Number.NaN);
      } else this.advance(q);
      return;
    }
    const k = riceParameter(this.sum);
    const hi = Math.floor(z / POW2[k]!);
    if (hi <= MAX_HI && k <= FAST_K) {
      // Prefix and low bits in one write: `hi` ones, a zero, then `k` bits (at most 31 in all).
      this.bits.write((((1 << hi) - 1) << (k + 1)) + (z - hi * POW2[k]!), hi + 1 + k);
    } else if (hi <= MAX_HI) {
      this.bits.write(((1 << hi) - 1) << 1, hi + 1);
      this.writeLow(z - hi * POW2[k]!, k);
    } else this.writeWide(z, value);
    this.sum = nextSum(this.sum, z);
    this.advance(q);
  }

  /** The column's bytes, trailing zero bytes left out (the decoder reads them back as zeros). */
  finish(): Uint8Array {
    const bytes = this.bits.toBytes();
    let end = bytes.length;
    while (end > 0 && bytes[end - 1] === 0) end--;
    return bytes.subarray(0, end);
  }

  private advance(q: number): void {
    this.delta = Number.isNaN(q) || Number.isNaN(this.previous) ? 0 : q - this.previous;
    this.previous = q;
  }

  /** The escape: `z` with its width, or (`z` NaN) the raw float64 of `value`. */
  private writeWide(z: number, value: number): void {
    this.bits.write(ESCAPE, 3);
    if (Number.isNaN(z)) {
      this.bits.write(RAW_WIDTH, WIDTH_BITS);
      this.bits.writeFloat64(value);
      return;
    }
    const width = bitLength(z);
    this.bits.write(width, WIDTH_BITS);
    this.writeLow(z, width);
  }

  private writeLow(value: number, width: number): void {
    if (width > 32) {
      this.bits.write(Math.floor(value / TWO_32), width - 32);
      this.bits.write(value % TWO_32, 32);
    } else this.bits.write(value, width);
  }
}

/** Zig-zag: 0, −1, 1, −2 … → 0, 1, 2, 3 …; NaN when the result is not a safe integer. */
function zigzag(residual: number): number {
  const z = residual >= 0 ? residual * 2 : -residual * 2 - 1;
  return Number.isSafeInteger(z) ? z : Number.NaN;
}

/**
 * Decodes `count` values of a column written by `ColumnEncoder` (column-codec.ts) from `input`
 * (exactly the column's stored bytes: reads past their end are zeros) into `out[from …]`.
 * Throws on a width code no encoder writes.
 *
 * This loop is most of a cold query's time, so it is written for the optimising compiler: one
 * function with the state in locals, the common code (a Rice code with `hi ≤ 2` and `k ≤ 28`,
 * decoded in int32 arithmetic) inline and first, the first value and the escapes out of line, and
 * the bits read four bytes at a time from a zero-padded copy (no bounds check per value).
 */
export function decodeColumn(
  input: Uint8Array,
  prediction: ColumnPrediction,
  out: Float64Array,
  from = 0,
  count = out.length - from,
): void {
  if (count <= 0) return;
  const bytes = copy.of(input);
  const view = copy.view;
  const rate = prediction === 'rate';
  const end = from + count;
  const storedBits = input.length * 8;
  // The first value: its scale bit, then always the escape (a width and the value, or a raw float64).
  let scale = (bytes[0]! & 0x80) !== 0 ? 1000 : 1;
  let pos = 1 + 3;
  const firstWidth = (peek32(bytes, view, pos) >>> (32 - WIDTH_BITS)) & ((1 << WIDTH_BITS) - 1);
  pos += WIDTH_BITS;
  let previous: number;
  let delta = 0;
  if (firstWidth === RAW_WIDTH) {
    const value = readFloat64(bytes, view, pos);
    pos += 64;
    out[from] = value;
    previous = scaled(value, scale);
  } else {
    if (firstWidth > MAX_WIDTH) throw new RangeError(`corrupt column: width ${firstWidth}`);
    previous = unzigzag(readBits(bytes, view, pos, firstWidth));
    pos += firstWidth;
    out[from] = previous / scale;
  }
  let sum = 0;
  for (let i = from + 1; i < end; i++) {
    if (pos >= storedBits) {
      // Past the stored bytes every residual is zero: the rest follows the prediction.
      fillPredicted(out, i, end, previous, rate ? delta : 0, scale);
      return;
    }
    const at = pos >>> 3;
    const shift = pos & 7;
    const head = view.getInt32(at);
    const word = shift === 0 ? head : (head << shift) | (bytes[at + 4]! >>> (8 - shift));
    const ones = Math.clz32(~word);
    const k = sum <= 1 << MEAN_SHIFT ? 0 : 32 - MEAN_SHIFT - Math.clz32(sum - 1);
    let z: number;
    let residual: number;
    if (ones <= MAX_HI && k <= FAST_K) {
      // z < 3 · 2^28: int32 arithmetic (a `%` or division on a double is a slow call).
      z = k === 0 ? ones : (ones << k) | ((word << (ones + 1)) >>> (32 - k));
      residual = (z >>> 1) ^ -(z & 1);
      pos += ones + 1 + k;
    } else if (ones <= MAX_HI) {
      z = ones * POW2[k]! + readBits(bytes, view, pos + ones + 1, k);
      residual = unzigzag(z);
      pos += ones + 1 + k;
    } else {
      const width = (word >>> (32 - 3 - WIDTH_BITS)) & ((1 << WIDTH_BITS) - 1);
      pos += 3 + WIDTH_BITS;
      if (width === RAW_WIDTH) {
        const value = readFloat64(bytes, view, pos);
        pos += 64;
        out[i] = value;
        if (scale === 1 && Number.isFinite(value) && !Number.isInteger(value)) {
          // A fraction in an integral column: 3 decimals from here on.
          scale = 1000;
          delta = 0;
          previous = Number.NaN;
        } else {
          const q = scaled(value, scale);
          delta = Number.isNaN(q) || Number.isNaN(previous) ? 0 : q - previous;
          previous = q;
        }
        continue;
      }
      if (width > MAX_WIDTH) throw new RangeError(`corrupt column: width ${width}`);
      z = readBits(bytes, view, pos, width);
      residual = unzigzag(z);
      pos += width;
    }
    sum = sum - (sum >>> MEAN_SHIFT) + (z < MAX_COUNTED_Z ? z : MAX_COUNTED_Z);
    const q = (rate ? previous + delta : previous) + residual;
    out[i] = q / scale;
    delta = q - previous;
    previous = q;
  }
}

/** `out[from … end)` continuing from `previous` by `step` per value (scaled integers). */
function fillPredicted(
  out: Float64Array,
  from: number,
  end: number,
  previous: number,
  step: number,
  scale: number,
): void {
  let q = previous;
  for (let i = from; i < end; i++) {
    q += step;
    out[i] = q / scale;
  }
}

/** The residual of a zig-zag mapped `z` (any size below 2^53). */
function unzigzag(z: number): number {
  const half = Math.floor(z / 2);
  return half * 2 === z ? half : -half - 1;
}

/** A value that starts inside the stored bytes reads at most 105 bits on (a raw float64 after an escape). */
const copy = new PaddedCopy(24);

/** The 32 bits from bit `pos` of the scratch copy (most significant first) as an int32. */
function peek32(bytes: Uint8Array, view: DataView, pos: number): number {
  const at = pos >>> 3;
  const shift = pos & 7;
  const head = view.getInt32(at);
  return shift === 0 ? head : (head << shift) | (bytes[at + 4]! >>> (8 - shift));
}

/** `count` bits (0 … 53) from bit `pos` as an unsigned number. */
function readBits(bytes: Uint8Array, view: DataView, pos: number, count: number): number {
  if (count === 0) return 0;
  if (count <= 32) return peek32(bytes, view, pos) >>> (32 - count);
  return (peek32(bytes, view, pos) >>> (64 - count)) * TWO_32 + (peek32(bytes, view, pos + count - 32) >>> 0);
}

const FLOAT = new DataView(new ArrayBuffer(8));

function readFloat64(bytes: Uint8Array, view: DataView, pos: number): number {
  FLOAT.setInt32(0, peek32(bytes, view, pos));
  FLOAT.setInt32(4, peek32(bytes, view, pos + 32));
  return FLOAT.getFloat64(0);
}
