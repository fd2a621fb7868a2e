/**
 * Memory for answers that are assembled for one request and cached nowhere, reused once their
 * response has been written (docs/performance.md#memory).
 *
 * Why: a varied series query answers ~200 KB, and under load most such answers were allocated
 * fresh per request. Their memory is malloc'd outside V8's heap and freed only when a garbage
 * collection finds the Buffer dead, so tens of megabytes of dead answers piled up between
 * collections, and glibc's main arena kept the pages it had grown to (RSS under load 1.27× idle,
 * two thirds of the growth in that arena). Handing the same few blocks out again keeps the
 * answers' memory at about what is being written at once.
 *
 * A block comes back only through `release`, which the caller may call once the response that
 * carried it is written (its last byte handed to the kernel): nothing else may hold the bytes then.
 * A block never released (a cached answer, a closed connection) is simply collected by V8.
 */

/** Smaller answers come from Node's own pool or a small malloc: not worth keeping. */
export const MIN_POOLED_BYTES = 16 << 10;
/** Blocks are whole multiples of this, so answers of similar sizes share them. */
const GRANULE_BYTES = 64 << 10;
/** Free blocks kept at most, in bytes: about what ten connections are sent at once. */
const MAX_FREE_BYTES = 2 << 20;
/** A free block is handed out for an answer at least half its size (no 4 MB block for 20 KB). */
const MAX_WASTE_FACTOR = 2;

export class AnswerBuffers {
  private readonly free: ArrayBuffer[] = [];
  private freeBytes = 0;

  /**
   * A buffer of exactly `length` bytes, uninitialised (the caller overwrites all of it): a view of
   * a free block when one fits, else of a new block. Below `MIN_POOLED_BYTES`, a plain buffer.
   */
  acquire(length: number): Buffer {
    if (length < MIN_POOLED_BYTES) return Buffer.allocUnsafe(length);
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const size = this.free[i]!.byteLength;
      if (
        size >= length &&
        size <= length * MAX_WASTE_FACTOR &&
        (best < 0 || size < this.free[best]!.byteLength)
      )
        best = i;
    }
    if (best >= 0) {
      const block = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
      this.freeBytes -= block.byteLength;
      return Buffer.from(block, 0, length);
    }
    const size = Math.ceil(length / GRANULE_BYTES) * GRANULE_BYTES;
    return Buffer.from(Buffer.allocUnsafeSlow(size).buffer, 0, length);
  }

  /**
   * Gives back a buffer from `acquire` that nothing uses any more (see the class comment); kept for
   * a later answer while the free blocks stay within their bound.
   */
  release(buffer: Buffer): void {
    if (buffer.length < MIN_POOLED_BYTES || buffer.byteOffset !== 0) return;
    const block = buffer.buffer;
    if (!(block instanceof ArrayBuffer) || this.freeBytes + block.byteLength > MAX_FREE_BYTES) return;
    // A block given back twice would be handed to two answers at once.
    if (this.free.includes(block)) return;
    this.free.push(block);
    this.freeBytes += block.byteLength;
  }

  /** Bytes of free blocks kept (for tests). */
  get keptBytes(): number {
    return this.freeBytes;
  }
}
