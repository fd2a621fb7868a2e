import type { DecodedValues } from './series-chunk.js';

/**
 * Decoded values of sealed (immutable) segment files, by file and series, bounded in bytes: a
 * chart that asks for the same year again (a range picker, live updates) reads no file and
 * decodes nothing, and the memory stays bounded whatever the retention. Files are the unit of
 * eviction (least recently used first): a query reads many series of a file together, and a
 * lookup by file then series needs no composed string key.
 */
export class DecodedCache {
  private readonly files = new Map<string, { series: Map<string, DecodedValues>; bytes: number }>();
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** The decoded series of one file (marks the file as used); add to it with `add`. */
  fileOf(path: string): ReadonlyMap<string, DecodedValues> | undefined {
    const file = this.files.get(path);
    if (file !== undefined) {
      this.files.delete(path);
      this.files.set(path, file);
    }
    return file?.series;
  }

  add(path: string, key: string, entry: DecodedValues): void {
    const size = sizeOf(entry);
    if (size > this.maxBytes) return;
    let file = this.files.get(path);
    if (file === undefined) {
      file = { series: new Map(), bytes: 0 };
      this.files.set(path, file);
    }
    const previous = file.series.get(key);
    if (previous !== undefined) this.account(file, -sizeOf(previous));
    file.series.set(key, entry);
    this.account(file, size);
    while (this.bytes > this.maxBytes) {
      const oldest = this.files.keys().next();
      if (oldest.done === true || oldest.value === path) break;
      this.dropFile(oldest.value);
    }
  }

  /** Drops every series of one file (deleted, found damaged, or least recently used). */
  dropFile(path: string): void {
    const file = this.files.get(path);
    if (file === undefined) return;
    this.files.delete(path);
    this.bytes -= file.bytes;
  }

  get byteLength(): number {
    return this.bytes;
  }

  private account(file: { bytes: number }, delta: number): void {
    file.bytes += delta;
    this.bytes += delta;
  }
}

function sizeOf(entry: DecodedValues): number {
  // The typed arrays plus a rough share for the map entry and key.
  return entry.steps.byteLength + entry.values.byteLength + 128;
}
