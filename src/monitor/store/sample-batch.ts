/**
 * The samples of one collection, staged until the whole snapshot is committed to the store at once
 * (so a query never sees half a snapshot). Two growable typed arrays: series ids and values.
 */
export class SampleBatch {
  private ids = new Int32Array(64);
  private values = new Float64Array(64);
  private count = 0;

  get length(): number {
    return this.count;
  }

  add(seriesId: number, value: number): void {
    if (this.count === this.ids.length) this.grow();
    this.ids[this.count] = seriesId;
    this.values[this.count] = value;
    this.count++;
  }

  /** Appends every sample of `other` (the per-collector batch of a collector that succeeded). */
  append(other: SampleBatch): void {
    for (let i = 0; i < other.count; i++) this.add(other.ids[i]!, other.values[i]!);
  }

  idAt(index: number): number {
    return this.ids[index]!;
  }

  valueAt(index: number): number {
    return this.values[index]!;
  }

  clear(): void {
    this.count = 0;
  }

  private grow(): void {
    const ids = new Int32Array(this.ids.length * 2);
    ids.set(this.ids);
    this.ids = ids;
    const values = new Float64Array(this.values.length * 2);
    values.set(this.values);
    this.values = values;
  }
}
