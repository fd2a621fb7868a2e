/**
 * Memory for the whole-metric blocks of one snapshot (series-fragments.ts), reused for the next
 * snapshot's blocks instead of being left to the garbage collector.
 *
 * Why: a varied series load makes a few megabytes of blocks per snapshot (one set per distinct
 * range), each dead two seconds later. They live long enough to reach V8's old generation, so they
 * were freed only at its next full collection, and the malloc arena grew to hold several
 * snapshots' worth at once (docs/performance.md, Memory). Blocks are only ever copied from, within
 * one synchronous assembly, and never sent themselves, so their memory is free again as soon as
 * the snapshot they belong to is replaced.
 *
 * Blocks are bump-allocated in chunks. `reset` starts over in the same chunks and drops the chunks
 * the ending snapshot did not use, so a burst of queries does not keep its memory forever.
 */

const CHUNK_BYTES = 1 << 20;

export class BlockArena {
  private readonly chunks: Buffer[] = [];
  /** The chunk being filled, and how far. */
  private current = 0;
  private offset = 0;
  private used = false;

  /** `length` bytes valid until the next `reset`. Longer than a chunk: a buffer of its own. */
  allocate(length: number): Buffer {
    if (length > CHUNK_BYTES) return Buffer.allocUnsafeSlow(length);
    this.used = true;
    if (this.chunks.length === 0) this.chunks.push(Buffer.allocUnsafeSlow(CHUNK_BYTES));
    if (this.offset + length > CHUNK_BYTES) {
      this.current++;
      this.offset = 0;
      if (this.current === this.chunks.length) this.chunks.push(Buffer.allocUnsafeSlow(CHUNK_BYTES));
    }
    const start = this.offset;
    this.offset += length;
    return this.chunks[this.current]!.subarray(start, this.offset);
  }

  /**
   * Every buffer handed out so far is free again (the caller holds none of them any more); keeps
   * the chunks the last round used.
   */
  reset(): void {
    this.chunks.length = this.used ? this.current + 1 : 0;
    this.current = 0;
    this.offset = 0;
    this.used = false;
  }

  /** Bytes of chunks held (for tests). */
  get heldBytes(): number {
    return this.chunks.length * CHUNK_BYTES;
  }
}
