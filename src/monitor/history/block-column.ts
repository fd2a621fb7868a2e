import type { ColumnPrediction } from './column-codec.js';
import { PaddedCopy } from './padded-copy.js';

/**
 * The first value column of a series in a sealed window of format 3 (docs/history.md#file-formats-dirminute-dirhour): the column a query reads, laid out so that decoding has no bit-by-bit dependency.
 * It is written once, when the window is sealed, from the values of the adaptive Rice column the
 * open window kept (column-codec.ts), so the whole column is known when it is encoded.
 *
 * - A scale for the whole column: 1 when every finite value is an integer, else 1000 (the API's 3
 *   decimals); each value is kept as `q = round(v · scale)`.
 * - Exceptions: values not exactly representable that way (NaN, ±Infinity, −0, huge) and values
 *   whose residual is not a safe integer, as (index, raw float64) pairs. At an exception, `q` is
 *   the representable value, or the prediction when there is none, and its residual is stored as 0.
 * - The first `q` as a zig-zag varint, then the residuals of the others against the prediction
 *   ("same as before" for gauges, "same increase as before" for counters), zig-zag mapped, in
 *   blocks of 32: a width byte `w` and the 32 values in `w` bits each, most significant first,
 *   padded to a byte. Every value of a block sits at a known bit, so the decoder's loop carries
 *   only the running value from one point to the next (the Rice code's position depended on every
 *   earlier value's code). Trailing blocks of zero residuals are not stored: a constant or a
 *   steadily rising column costs its first value.
 *
 * Against the Rice code a block costs the widest residual of its 32 instead of about their mean:
 * about 10 % more bytes for the first column on the bench's series; decoding is several times
 * faster.
 *
 * Why encoder and decoder stay in one file (about 350 lines): as in column-codec.ts, they are one
 * format, and module-local constants are what V8 folds into the decoder's loops.
 */
const BLOCK = 32;
/** Widest residual a block stores (zig-zag of a safe integer). */
const MAX_WIDTH = 53;
const TWO_32 = 2 ** 32;
const TWO_52 = 2 ** 52;

/** The scaled integer of `value`, or NaN when it is not exactly representable at `scale`. */
function representable(value: number, scale: number): number {
  if (value === 0 && 1 / value < 0) return Number.NaN;
  const q = Math.round(value * scale);
  if (!Number.isSafeInteger(q) || q / scale !== value) return Number.NaN;
  return q;
}

function zigzag(residual: number): number {
  return residual >= 0 ? residual * 2 : -residual * 2 - 1;
}

/** Encodes a whole column (`values`, oldest first). Runs once per series when a window is sealed. */
export function encodeBlockColumn(values: ArrayLike<number>, prediction: ColumnPrediction): Uint8Array {
  const rate = prediction === 'rate';
  const count = values.length;
  let scale = 1;
  for (let i = 0; i < count; i++) {
    const value = values[i]!;
    if (Number.isFinite(value) && !Number.isInteger(value)) scale = 1000;
  }
  if (residuals.length < count) residuals = new Float64Array(2 * count);
  const z = residuals;
  const blocks = Math.ceil((count - 1) / BLOCK);
  if (blockMax.length < blocks) blockMax = new Float64Array(2 * blocks);
  blockMax.fill(0, 0, blocks);
  const exceptions: number[] = [];
  let previous = 0;
  let delta = 0;
  for (let i = 0; i < count; i++) {
    const predicted = i === 0 ? 0 : rate ? previous + delta : previous;
    const q = representable(values[i]!, scale);
    let kept = q;
    let residual = 0;
    // The first value is stored whole (its residual against 0), so it must fit a varint too.
    if (Number.isNaN(q) || Math.abs(q - predicted) >= TWO_52) {
      exceptions.push(i);
      if (Number.isNaN(q)) kept = predicted;
    } else residual = zigzag(q - predicted);
    z[i] = residual;
    if (i > 0) {
      const block = (i - 1) >>> 5;
      if (residual > blockMax[block]!) blockMax[block] = residual;
      delta = kept - previous;
    }
    previous = kept;
  }
  // Room for the head and for every block at its widest.
  const bound = 32 + 17 * exceptions.length + blocks * (1 + 7 * BLOCK);
  if (output.length < bound) {
    output = new Uint8Array(2 * bound);
    outputView = new DataView(output.buffer);
  }
  const out = output;
  length = 0;
  out[length++] = scale === 1 ? 0 : 1;
  writeVarint(exceptions.length);
  let last = 0;
  for (const index of exceptions) {
    writeVarint(index - last);
    outputView.setFloat64(length, values[index]!, true);
    length += 8;
    last = index;
  }
  writeVarint(count > 0 ? z[0]! : 0);
  let stored = blocks;
  while (stored > 0 && blockMax[stored - 1] === 0) stored--;
  let at = length;
  for (let b = 0; b < stored; b++) {
    const from = 1 + b * BLOCK;
    const to = Math.min(from + BLOCK, count);
    const max = blockMax[b]!;
    const width =
      max === 0 ? 0 : max < TWO_32 ? 32 - Math.clz32(max) : 64 - Math.clz32(Math.floor(max / TWO_32));
    out[at++] = width;
    if (width === 0) continue;
    // Bits not yet written as a byte (fewer than 8 after each value), and how many.
    let bits = 0;
    let pending = 0;
    if (width <= 24) {
      for (let i = from; i < to; i++) {
        bits = (bits << width) | z[i]!;
        pending += width;
        while (pending >= 8) {
          pending -= 8;
          out[at++] = bits >>> pending;
        }
        bits &= (1 << pending) - 1;
      }
    } else {
      // Wider: the value in 16-bit pieces, most significant first (integer operators are exact
      // below 2^32; above, the high part is split off by division).
      for (let i = from; i < to; i++) {
        const value = z[i]!;
        const high = value < TWO_32 ? 0 : Math.floor(value / TWO_32);
        for (let piece = Math.ceil(width / 16) - 1; piece >= 0; piece--) {
          const part =
            piece >= 2 ? (high >>> (16 * (piece - 2))) & 0xffff : (value >>> (16 * piece)) & 0xffff;
          const size = piece === Math.ceil(width / 16) - 1 ? width - 16 * piece : 16;
          bits = (bits << size) | (part & ((1 << size) - 1));
          pending += size;
          while (pending >= 8) {
            pending -= 8;
            out[at++] = bits >>> pending;
          }
          bits &= (1 << pending) - 1;
        }
      }
    }
    if (pending > 0) out[at++] = (bits << (8 - pending)) & 0xff;
  }
  return out.slice(0, at);
}

/** The encoder's scratch (encoding is synchronous): residuals, output and its write position. */
let residuals = new Float64Array(512);
let output = new Uint8Array(4096);
let outputView = new DataView(output.buffer);
let length = 0;
/** The widest residual of each block. */
let blockMax = new Float64Array(16);

function writeVarint(value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    output[length++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  output[length++] = rest;
}

/**
 * Decodes `count` values of a block column from `input` (exactly its stored bytes) into
 * `out[from …]`. Throws on a width or an exception no encoder writes.
 */
export function decodeBlockColumn(
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
  const scale = (bytes[0]! & 1) !== 0 ? 1000 : 1;
  let pos = 1;
  // Exceptions: indexes into `exceptionAt`, raw values into `exceptionValue`.
  const exceptionCount = readVarint(bytes, pos);
  pos = varintEnd;
  if (exceptionCount > count) throw new RangeError('corrupt column: exceptions');
  if (exceptionAt.length < exceptionCount + 1) {
    exceptionAt = new Int32Array(2 * exceptionCount + 1);
    exceptionValue = new Float64Array(2 * exceptionCount + 1);
  }
  let index = 0;
  for (let e = 0; e < exceptionCount; e++) {
    index += readVarint(bytes, pos);
    pos = varintEnd + 8;
    if (index >= count || (e > 0 && index <= exceptionAt[e - 1]!))
      throw new RangeError('corrupt column: exception');
    exceptionAt[e] = index;
    exceptionValue[e] = view.getFloat64(varintEnd, true);
  }
  exceptionAt[exceptionCount] = -1;
  let exception = 0;
  let nextException = exceptionAt[0]!;
  const z0 = readVarint(bytes, pos);
  pos = varintEnd;
  let previous = z0 % 2 === 0 ? z0 / 2 : -(z0 + 1) / 2;
  let delta = 0;
  if (nextException === 0) {
    const raw = exceptionValue[exception++]!;
    const q = representable(raw, scale);
    if (!Number.isNaN(q)) previous = q;
    out[from] = raw;
    nextException = exceptionAt[exception]!;
  } else out[from] = previous / scale;
  const end = input.length;
  let i = 1;
  while (i < count) {
    const n = count - i < BLOCK ? count - i : BLOCK;
    const base = from + i;
    // Past the stored bytes every residual is zero; so is every residual of a width-0 block.
    const width = pos < end ? bytes[pos++]! : 0;
    if (width > MAX_WIDTH) throw new RangeError(`corrupt column: width ${width}`);
    let bit = pos * 8;
    if (width <= 32 && (nextException < 0 || nextException >= i + n)) {
      // Most blocks: no exception and residuals of at most 32 bits.
      previous = decodePlainBlock(bytes, view, bit, width, n, rate, previous, delta, scale, out, base);
      delta = blockDelta;
      if (width > 0) pos += (n * width + 7) >>> 3;
      i += n;
      continue;
    }
    for (let j = 0; j < n; j++) {
      let residual = 0;
      if (width > 32) {
        const high = readBits(bytes, view, bit, width - 32);
        const z = high * TWO_32 + readBits(bytes, view, bit + width - 32, 32);
        residual = z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      } else if (width > 0) {
        // 32 bits from `bit`: four bytes and the top of a fifth (the copy is zero-padded).
        const at = bit >>> 3;
        const shift = bit & 7;
        const z = ((view.getInt32(at) << shift) | (bytes[at + 4]! >>> (8 - shift))) >>> (32 - width);
        residual = (z >>> 1) ^ -(z & 1);
      }
      bit += width;
      let q = (rate ? previous + delta : previous) + residual;
      if (i + j === nextException) {
        const raw = exceptionValue[exception++]!;
        const kept = representable(raw, scale);
        if (!Number.isNaN(kept)) q = kept;
        out[base + j] = raw;
        nextException = exceptionAt[exception]!;
      } else out[base + j] = q / scale;
      delta = q - previous;
      previous = q;
    }
    if (width > 0) pos += (n * width + 7) >>> 3;
    i += n;
  }
  if (exception !== exceptionCount) throw new RangeError('corrupt column: exceptions');
}

/** The prediction's step after `decodePlainBlock` (a second result). */
let blockDelta = 0;

/**
 * Decodes a block with no exception and residuals of at most 32 bits (almost all of them) into
 * `out[base …]`, from the running value `previous` and its last step `delta`; returns the new
 * running value and leaves the step in `blockDelta`. A small function with a loop per case and
 * nothing else to decide per value: about a fifth faster than the general loop.
 */
function decodePlainBlock(
  bytes: Uint8Array,
  view: DataView,
  bit: number,
  width: number,
  n: number,
  rate: boolean,
  previous: number,
  delta: number,
  scale: number,
  out: Float64Array,
  base: number,
): number {
  const drop = 32 - width;
  if (width === 0) {
    for (let j = 0; j < n; j++) {
      if (rate) previous += delta;
      out[base + j] = previous / scale;
    }
    blockDelta = rate ? delta : 0;
    return previous;
  }
  if (rate) {
    for (let j = 0; j < n; j++, bit += width) {
      const at = bit >>> 3;
      const shift = bit & 7;
      const z = ((view.getInt32(at) << shift) | (bytes[at + 4]! >>> (8 - shift))) >>> drop;
      const q = previous + delta + ((z >>> 1) ^ -(z & 1));
      out[base + j] = q / scale;
      delta = q - previous;
      previous = q;
    }
    blockDelta = delta;
    return previous;
  }
  let residual = 0;
  for (let j = 0; j < n; j++, bit += width) {
    const at = bit >>> 3;
    const shift = bit & 7;
    const z = ((view.getInt32(at) << shift) | (bytes[at + 4]! >>> (8 - shift))) >>> drop;
    residual = (z >>> 1) ^ -(z & 1);
    previous += residual;
    out[base + j] = previous / scale;
  }
  blockDelta = residual;
  return previous;
}

/** A block's widest read (a 53-bit value) ends within 16 bytes past its start. */
const copy = new PaddedCopy(16);
let exceptionAt = new Int32Array(16);
let exceptionValue = new Float64Array(16);

/** Where the last `readVarint` ended. */
let varintEnd = 0;

/** An unsigned LEB128 varint (as ByteWriter writes) at `pos`; sets `varintEnd`. */
function readVarint(bytes: Uint8Array, pos: number): number {
  let value = 0;
  let factor = 1;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[pos + i]!;
    value += (byte & 0x7f) * factor;
    if (byte < 0x80) {
      varintEnd = pos + i + 1;
      return value;
    }
    factor *= 0x80;
  }
  throw new RangeError('corrupt column: varint too long');
}

/** `count` bits (1 … 32) from bit `pos` as an unsigned number. */
function readBits(bytes: Uint8Array, view: DataView, pos: number, count: number): number {
  const at = pos >>> 3;
  const shift = pos & 7;
  return ((view.getInt32(at) << shift) | (bytes[at + 4]! >>> (8 - shift))) >>> (32 - count);
}
