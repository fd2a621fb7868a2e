/** Blocks are carved from chunks of this size; a larger block gets memory of its own. */
const CHUNK_BYTES = 256 << 10;

/**
 * Memory for the blocks a snapshot keeps (series-fragments.ts), reused for the next snapshot's.
 *
 * Why: under a varied series load every snapshot makes a few megabytes of blocks (one per metric
 * and range: 21 ranges × ~200 KB in bench/memory.ts) that die together when the next snapshot
 * replaces them, but stay allocated until a major garbage collection finds them; the main malloc
 * arena climbed by one snapshot's blocks every two seconds and fell back every ~12 s
 * (docs/performance.md#memory). Blocks are only ever copied into answers, within the call that
 * assembles the answer, so once the snapshot is replaced nothing reads them and their memory can
 * serve the next blocks at once.
 *
 * The caller promises exactly that: a view from `allocate` is not used after the next `reset`.
 * At most `maxBytes` are handed out per round (past it, plain buffers); chunks the last round did
 * not need are let go, so the arena follows the load down as well as up.
 */
export class BlockArena {
  private readonly maxBytes: number;
  private readonly chunks: ArrayBuffer[] = [];
  /** The chunk blocks are carved from now (-1: none yet this round), and where in it. */
  private current = -1;
  private offset = CHUNK_BYTES;
  private handedOut = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** `length` bytes, uninitialised, valid until the next `reset`. */
  allocate(length: number): Buffer {
    if (length > CHUNK_BYTES || this.handedOut + length > this.maxBytes) return Buffer.allocUnsafe(length);
    if (this.current < 0 || this.offset + length > CHUNK_BYTES) {
      this.current++;
      if (this.current === this.chunks.length) this.chunks.push(new ArrayBuffer(CHUNK_BYTES));
      this.offset = 0;
    }
    const view = Buffer.from(this.chunks[this.current]!, this.offset, length);
    this.offset += length;
    this.handedOut += length;
    return view;
  }

  /** Every view handed out so far is dead: their memory serves the next round. */
  reset(): void {
    this.chunks.length = this.current + 1;
    this.current = -1;
    this.offset = CHUNK_BYTES;
    this.handedOut = 0;
  }

  /** Bytes of chunks held (for tests). */
  get heldBytes(): number {
    return this.chunks.length * CHUNK_BYTES;
  }
}
