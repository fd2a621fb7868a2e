/**
 * Sums, counts, maxima and last values of every series over the current step, in typed arrays
 * indexed by series slot: adding a sample is four array writes, nothing allocated (the hot path
 * of every collection tick).
 */
export class StepAggregator {
  private sum = new Float64Array(256);
  private count = new Float64Array(256);
  private max = new Float64Array(256);
  private last = new Float64Array(256);
  /** Slots with at least one sample this step, in first-sample order. */
  private touched = new Int32Array(256);
  private touchedCount = 0;

  add(slot: number, mean: number, max: number, last: number): void {
    if (slot >= this.sum.length) this.grow(slot + 1);
    if (this.count[slot] === 0) {
      this.touched[this.touchedCount++] = slot;
      this.sum[slot] = mean;
      this.max[slot] = max;
    } else {
      this.sum[slot]! += mean;
      if (max > this.max[slot]!) this.max[slot] = max;
    }
    this.count[slot]!++;
    this.last[slot] = last;
  }

  /** Does the slot have a sample in the current step? */
  has(slot: number): boolean {
    return slot < this.count.length && this.count[slot]! > 0;
  }

  get size(): number {
    return this.touchedCount;
  }

  /** Calls `visit(slot, mean, max, last)` for every slot with samples so far, keeping them. */
  peek(visit: (slot: number, mean: number, max: number, last: number) => void): void {
    for (let i = 0; i < this.touchedCount; i++) {
      const slot = this.touched[i]!;
      visit(slot, this.sum[slot]! / this.count[slot]!, this.max[slot]!, this.last[slot]!);
    }
  }

  /** Calls `visit(slot, mean, max, last)` for every slot with samples, then starts a new step. */
  drain(visit: (slot: number, mean: number, max: number, last: number) => void): void {
    for (let i = 0; i < this.touchedCount; i++) {
      const slot = this.touched[i]!;
      visit(slot, this.sum[slot]! / this.count[slot]!, this.max[slot]!, this.last[slot]!);
      this.count[slot] = 0;
    }
    this.touchedCount = 0;
  }

  private grow(minimum: number): void {
    let length = this.sum.length;
    while (length < minimum) length *= 2;
    const grow = (array: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const grown = new Float64Array(length);
      grown.set(array);
      return grown;
    };
    this.sum = grow(this.sum);
    this.count = grow(this.count);
    this.max = grow(this.max);
    this.last = grow(this.last);
    const touched = new Int32Array(length);
    touched.set(this.touched);
    this.touched = touched;
  }
}
