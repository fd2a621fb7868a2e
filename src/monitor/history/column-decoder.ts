import {
  FAST_K,
  MAX_COUNTED_Z,
  MAX_HI,
  MAX_WIDTH,
  MEAN_SHIFT,
  POW2,
  RAW_WIDTH,
  scaled,
  TWO_32,
  WIDTH_BITS,
  type ColumnPrediction,
} from './column-codec.js';

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
  const bytes = padded(input);
  const view = scratchView;
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

/**
 * A zero-padded copy of the column being decoded (decoding is synchronous, so one scratch buffer
 * serves all): a value that starts inside the stored bytes reads at most 105 bits on, so with
 * `PADDING` zero bytes no read needs a bounds check, and words are read four bytes at a time.
 */
const PADDING = 24;
let scratch = new Uint8Array(4096);
let scratchView = new DataView(scratch.buffer);

function padded(input: Uint8Array): Uint8Array {
  if (input.length + PADDING > scratch.length) {
    scratch = new Uint8Array(2 * (input.length + PADDING));
    scratchView = new DataView(scratch.buffer);
  }
  scratch.set(input);
  scratch.fill(0, input.length, input.length + PADDING);
  return scratch;
}

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
