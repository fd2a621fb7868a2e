/**
 * The decoded series of one sealed file that one query decoded, by position in the file's index:
 * `entryOf` maps a position to an entry, and entry `e` is `count[e]` values from
 * `values[e][at[e]]` with steps either dense (absolute step numbers `firstStep[e]`, `+ 1` …; an
 * absolute step is the time divided by the tier's step) or `steps[e][stepsAt[e] …]`, each relative
 * to the absolute step `baseStep[e]`. A query decodes each series into one buffer, so the entries
 * of consecutive files lie back to back in it and a later query answers them as one piece without
 * copying. Typed arrays rather than an object per entry: see sealed-read.ts.
 */
export interface DecodedFile {
  readonly entryOf: Map<number, number>;
  readonly values: Float64Array[];
  readonly at: Int32Array;
  readonly count: Int32Array;
  readonly firstStep: Float64Array;
  readonly steps: (Int32Array | undefined)[];
  readonly stepsAt: Int32Array;
  readonly baseStep: Float64Array;
}

/**
 * Decoded values of sealed (immutable) segment files, bounded in bytes: a chart that asks for the
 * same year again (a range picker, live updates) reads no file and decodes nothing, and the
 * memory stays bounded whatever the retention. Files are the unit of eviction (least recently
 * used first); the bytes counted are those of the memory the kept entries hold: each
 * `ArrayBuffer` once, whole, however many entries and series share it (a query decodes all its
 * series into one), so the bound is on memory.
 */
export class DecodedCache {
  private readonly files = new Map<string, DecodedFile[]>();
  /** Entries holding each buffer (the memory under the entries' views). */
  private readonly holders = new Map<ArrayBufferLike, number>();
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get limitBytes(): number {
    return this.maxBytes;
  }

  /** What is cached of one file (marks the file as used). */
  fileOf(path: string): readonly DecodedFile[] | undefined {
    const file = this.files.get(path);
    if (file !== undefined) {
      this.files.delete(path);
      this.files.set(path, file);
    }
    return file;
  }

  /** Adds what a query decoded of one file (positions not cached before). */
  add(path: string, decoded: DecodedFile): void {
    let file = this.files.get(path);
    if (file === undefined) {
      file = [];
      this.files.set(path, file);
    }
    file.push(decoded);
    for (let e = 0; e < decoded.values.length; e++) {
      this.hold(decoded.values[e]!);
      const steps = decoded.steps[e];
      if (steps !== undefined) this.hold(steps);
    }
  }

  /**
   * Drops least recently used files until the bytes are within the bound; `keep` (the files of
   * the query that just added) stay.
   */
  trim(keep: ReadonlySet<string>): void {
    for (const path of this.files.keys()) {
      if (this.bytes <= this.maxBytes) return;
      if (!keep.has(path)) this.dropFile(path);
    }
  }

  /** Drops every series of one file (deleted, found damaged, or least recently used). */
  dropFile(path: string): void {
    const file = this.files.get(path);
    if (file === undefined) return;
    this.files.delete(path);
    for (const decoded of file) {
      for (let e = 0; e < decoded.values.length; e++) {
        this.unhold(decoded.values[e]!);
        const steps = decoded.steps[e];
        if (steps !== undefined) this.unhold(steps);
      }
    }
  }

  get byteLength(): number {
    return this.bytes;
  }

  private hold(view: Float64Array | Int32Array): void {
    const buffer = view.buffer;
    const holders = this.holders.get(buffer) ?? 0;
    if (holders === 0) this.bytes += buffer.byteLength;
    this.holders.set(buffer, holders + 1);
  }

  private unhold(view: Float64Array | Int32Array): void {
    const buffer = view.buffer;
    const holders = this.holders.get(buffer)! - 1;
    if (holders > 0) {
      this.holders.set(buffer, holders);
      return;
    }
    this.holders.delete(buffer);
    this.bytes -= buffer.byteLength;
  }
}
