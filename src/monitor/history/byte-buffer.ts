/**
 * A growable little-endian byte writer and its reader, for the record payloads of the history
 * files: unsigned LEB128 varints (up to 2^53), float64, length-prefixed UTF-8 strings and bytes.
 */
export class ByteWriter {
  private bytes: Uint8Array;
  private view: DataView;
  private length = 0;
  private readonly encoder = new TextEncoder();

  constructor(initialBytes = 256) {
    this.bytes = new Uint8Array(initialBytes);
    this.view = new DataView(this.bytes.buffer);
  }

  get byteLength(): number {
    return this.length;
  }

  u8(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value, true);
    this.length += 4;
  }

  /** Unsigned integer 0 … 2^53 − 1. */
  varint(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.bytes[this.length++] = rest;
  }

  f64(value: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  string(value: string): void {
    this.bytesField(this.encoder.encode(value));
  }

  bytesField(value: Uint8Array): void {
    this.varint(value.length);
    this.raw(value);
  }

  raw(value: Uint8Array): void {
    this.reserve(value.length);
    this.bytes.set(value, this.length);
    this.length += value.length;
  }

  /** The bytes written (a view; valid until the next write). */
  finish(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.length + extra, this.bytes.length * 2));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
}

/** One decoder for every reader (decoding is synchronous). */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads what a `ByteWriter` wrote; reading past the end throws a `RangeError` (corrupt payload). */
export class ByteReader {
  private bytes: Uint8Array;
  private view: DataView;
  private offset = 0;

  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Reads `bytes` from their start (a long-lived reader for many payloads). */
  reset(bytes: Uint8Array): this {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = 0;
    return this;
  }

  get done(): boolean {
    return this.offset >= this.bytes.length;
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.offset++]!;
  }

  u32(): number {
    this.need(4);
    const value = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return value;
  }

  varint(): number {
    let value = 0;
    let factor = 1;
    for (let i = 0; i < 8; i++) {
      const byte = this.u8();
      value += (byte & 0x7f) * factor;
      if (byte < 0x80) return value;
      factor *= 0x80;
    }
    throw new RangeError('varint too long');
  }

  f64(): number {
    this.need(8);
    const value = this.view.getFloat64(this.offset, true);
    this.offset += 8;
    return value;
  }

  string(): string {
    return UTF8.decode(this.bytesField());
  }

  bytesField(): Uint8Array {
    const length = this.varint();
    this.need(length);
    const value = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  private need(count: number): void {
    if (this.offset + count > this.bytes.length) throw new RangeError('payload ends early');
  }
}
