/** Target size of one allocation block, bytes. Big enough to amortise the typed-array overhead. */
const BLOCK_BYTES = 1 << 20;

/**
 * One row of `capacity` float64 slots per series id, packed into blocks of about 1 MiB so that a
 * retained sample costs its 8 bytes plus a share of one block header, not an object. An absent
 * sample is `NaN` (collectors never store NaN: the store drops non-finite values).
 */
export class ValueRows {
  readonly capacity: number;
  private readonly rowsPerBlock: number;
  private readonly blocks: Float64Array[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
    this.rowsPerBlock = Math.max(1, Math.floor(BLOCK_BYTES / (capacity * 8)));
  }

  /** Makes sure `row` exists; new rows are all absent. */
  ensureRow(row: number): void {
    const block = Math.floor(row / this.rowsPerBlock);
    while (this.blocks.length <= block) {
      this.blocks.push(new Float64Array(this.rowsPerBlock * this.capacity).fill(Number.NaN));
    }
  }

  get(row: number, slot: number): number {
    const block = this.blocks[Math.floor(row / this.rowsPerBlock)];
    return block === undefined ? Number.NaN : block[(row % this.rowsPerBlock) * this.capacity + slot]!;
  }

  set(row: number, slot: number, value: number): void {
    this.blocks[Math.floor(row / this.rowsPerBlock)]![(row % this.rowsPerBlock) * this.capacity + slot] =
      value;
  }

  /** Marks every slot of `row` absent (before the row is reused for another series). */
  clearRow(row: number): void {
    const block = this.blocks[Math.floor(row / this.rowsPerBlock)];
    if (block === undefined) return;
    const start = (row % this.rowsPerBlock) * this.capacity;
    block.fill(Number.NaN, start, start + this.capacity);
  }

  /** Bytes held by the value blocks (for the memory benchmark and docs). */
  get byteLength(): number {
    return this.blocks.length * this.rowsPerBlock * this.capacity * 8;
  }
}
