/**
 * Bit-level writer and reader over bytes, most significant bit first, for the chunk codec.
 * Writes take at most 32 bits at a time (JavaScript bit operators work on 32-bit integers);
 * wider fields are written as two halves by the caller.
 */
export class BitWriter {
  private bytes: Uint8Array;
  /** Bits written so far. */
  private length = 0;

  constructor(initialBytes = 16) {
    this.bytes = new Uint8Array(initialBytes);
  }

  get bitLength(): number {
    return this.length;
  }

  /** Writes the low `count` bits of `value` (0 ≤ count ≤ 32), most significant first. */
  write(value: number, count: number): void {
    if (count === 0) return;
    let length = this.length;
    if ((length + count + 7) >>> 3 > this.bytes.length) this.grow(length + count);
    const bytes = this.bytes;
    let remaining = count;
    const used = length & 7;
    if (used !== 0) {
      // Fill the partly written byte first.
      const free = 8 - used;
      const take = remaining < free ? remaining : free;
      bytes[length >>> 3]! |= ((value >>> (remaining - take)) & ((1 << take) - 1)) << (free - take);
      length += take;
      remaining -= take;
    }
    while (remaining >= 8) {
      remaining -= 8;
      bytes[length >>> 3] = (value >>> remaining) & 0xff;
      length += 8;
    }
    if (remaining > 0) {
      bytes[length >>> 3] = (value & ((1 << remaining) - 1)) << (8 - remaining);
      length += remaining;
    }
    this.length = length;
  }

  /** Writes the 64 bits of a float64. */
  writeFloat64(value: number): void {
    SCRATCH.setFloat64(0, value);
    this.write(SCRATCH.getUint32(0), 32);
    this.write(SCRATCH.getUint32(4), 32);
  }

  /** The bytes written so far (a copy, trimmed to whole bytes). */
  toBytes(): Uint8Array {
    return this.bytes.slice(0, (this.length + 7) >>> 3);
  }

  /** Bytes held (for memory accounting). */
  get capacityBytes(): number {
    return this.bytes.length;
  }

  private grow(bits: number): void {
    const needed = (bits + 7) >>> 3;
    // Grow by half (at least 16 bytes): chunks grow a few bits per point, so doubling would
    // waste memory per series, and small steps would reallocate at every few points.
    const grown = new Uint8Array(
      Math.max(needed, Math.ceil(this.bytes.length * 1.5), this.bytes.length + 16),
    );
    grown.set(this.bytes);
    this.bytes = grown;
  }
}

/** Reads what a `BitWriter` wrote. Reading past the end throws (a corrupt chunk). */
export class BitReader {
  private readonly bytes: Uint8Array;
  private readonly end: number;
  private position = 0;

  constructor(bytes: Uint8Array, bitLength = bytes.length * 8) {
    this.bytes = bytes;
    this.end = bitLength;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  /** Reads `count` bits (0 ≤ count ≤ 32) as an unsigned number. */
  read(count: number): number {
    if (count > 25) {
      // Two reads: the fast path below handles up to 25 bits (a 4-byte window minus the bit offset).
      const high = this.read(count - 16);
      return high * 65_536 + this.read(16);
    }
    if (count === 0) return 0;
    const position = this.position;
    if (position + count > this.end) throw new RangeError('chunk ends early');
    const bytes = this.bytes;
    const i = position >>> 3;
    // Bytes past the end read as 0 (`undefined | 0`); they are never part of the result.
    const word =
      (bytes[i]! << 24) | ((bytes[i + 1]! | 0) << 16) | ((bytes[i + 2]! | 0) << 8) | (bytes[i + 3]! | 0);
    this.position = position + count;
    return (word << (position & 7)) >>> (32 - count);
  }

  readBit(): number {
    if (this.position >= this.end) throw new RangeError('chunk ends early');
    const bit = (this.bytes[this.position >>> 3]! >>> (7 - (this.position & 7))) & 1;
    this.position++;
    return bit;
  }

  /**
   * How many one bits follow, up to `max` (≤ 24), consumed together with the zero that ends them
   * (not consumed when `max` ones were read): a unary prefix in one step instead of bit by bit.
   */
  readOnes(max: number): number {
    const position = this.position;
    const available = Math.min(max + 1, this.end - position);
    if (available <= 0) throw new RangeError('chunk ends early');
    const bytes = this.bytes;
    const i = position >>> 3;
    const word =
      (bytes[i]! << 24) | ((bytes[i + 1]! | 0) << 16) | ((bytes[i + 2]! | 0) << 8) | (bytes[i + 3]! | 0);
    // The next bits at the top, then the leading ones counted as the leading zeros of the inverse.
    const ones = Math.min(Math.clz32(~(word << (position & 7))), max);
    if (ones === max) {
      if (position + max > this.end) throw new RangeError('chunk ends early');
      this.position = position + max;
      return max;
    }
    if (ones + 1 > available) throw new RangeError('chunk ends early');
    this.position = position + ones + 1;
    return ones;
  }

  readFloat64(): number {
    SCRATCH.setUint32(0, this.read(32));
    SCRATCH.setUint32(4, this.read(32));
    return SCRATCH.getFloat64(0);
  }
}

/** Shared by all writers and readers (synchronous): a writer or reader allocates nothing more. */
const SCRATCH = new DataView(new ArrayBuffer(8));
