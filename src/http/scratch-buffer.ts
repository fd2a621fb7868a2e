/**
 * One large buffer lent to one borrower at a time and kept between loans, grown as needed. A
 * large answer that is only an intermediate (the process list before it is gzip-encoded) was
 * built in fresh memory on every request, and the kernel's page faults on first touch cost about
 * 1 ms per 1.4 MB on this VM (docs/performance.md#a-full-server). While the buffer is lent, a
 * second borrower gets a fresh one, so concurrent requests never share bytes.
 */
export class ScratchBuffer {
  private buffer = Buffer.alloc(0);
  private lent = false;

  /** Runs `use` with a buffer of at least `size` bytes, which it must not keep after it settles. */
  async borrow<T>(size: number, use: (buffer: Buffer) => Promise<T>): Promise<T> {
    if (this.lent) return use(Buffer.allocUnsafe(size));
    // allocUnsafeSlow: the kept buffer is its own allocation, never a slice of Node's shared pool.
    if (this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(size + (size >> 3));
    this.lent = true;
    try {
      return await use(this.buffer);
    } finally {
      this.lent = false;
    }
  }
}
