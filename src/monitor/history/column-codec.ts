import { BitWriter } from './bit-stream.js';

/**
 * Compression of one column of a series' points in one window (the steps, the mean, the max or
 * the end value), written point by point while the window is open and decoded on its own, so a
 * query decodes only the column it answers with (docs/history.md, File formats).
 *
 * - Values are decimals: the API answers at most 3 decimals (SPEC §5.2), so a value is kept as the
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
 */
export type ColumnPrediction = 'hold' | 'rate';

/**
 * `k` follows 16 times the running mean of `z` (an exponentially weighted sum, weight 1/16, each `z`
 * counted up to 2^26): integer arithmetic only, and recent residuals count most, so it follows changes.
 */
export const MEAN_SHIFT = 4;
export const MAX_COUNTED_Z = 2 ** 26;
/** Largest `hi` written in unary; beyond, the escape. */
export const MAX_HI = 2;
const ESCAPE = 0b111;
export const WIDTH_BITS = 6;
/** The width code of a raw float64. */
export const RAW_WIDTH = 63;
/** Widest `z` written as an integer (a safe integer has at most 53 bits). */
export const MAX_WIDTH = 53;
export const TWO_32 = 2 ** 32;
/** Largest Rice parameter decoded with int32 arithmetic: `hi · 2^k + low` stays below 2^31 (`hi ≤ 2`). */
export const FAST_K = 28;
export const POW2 = Array.from({ length: 64 }, (_, k) => 2 ** k);

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
export function scaled(value: number, scale: number): number {
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
