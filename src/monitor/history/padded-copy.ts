/**
 * A zero-padded copy of the column a decoder is reading (column-codec.ts, block-column.ts), so that
 * its loop reads four bytes at a time with no bounds check: every read a value can start inside the
 * stored bytes ends within `padding` bytes past them, and those bytes are zeros. Decoding is
 * synchronous, so one copy per decoder serves all its calls; the buffer only grows.
 */
export class PaddedCopy {
  bytes = new Uint8Array(4096);
  view = new DataView(this.bytes.buffer);

  constructor(private readonly padding: number) {}

  /** `input` copied to the start of `bytes` and followed by `padding` zero bytes; returns `bytes`. */
  of(input: Uint8Array): Uint8Array {
    if (input.length + this.padding > this.bytes.length) {
      this.bytes = new Uint8Array(2 * (input.length + this.padding));
      this.view = new DataView(this.bytes.buffer);
    }
    this.bytes.set(input);
    this.bytes.fill(0, input.length, input.length + this.padding);
    return this.bytes;
  }
}
