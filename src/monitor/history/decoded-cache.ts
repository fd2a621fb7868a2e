/** The API values of one decoded chunk: window-relative steps and values, oldest first. */
export interface DecodedValues {
  steps: Int32Array;
  values: Float64Array;
}

/**
 * Decoded chunks of sealed (immutable) segment files, least recently used dropped first, bounded
 * in bytes: a chart that asks for the same year again (a range picker, live updates) reads no file
 * and decodes nothing, and the memory stays bounded whatever the retention.
 */
export class DecodedCache {
  private readonly entries = new Map<string, DecodedValues>();
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): DecodedValues | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: DecodedValues): void {
    const size = sizeOf(entry);
    if (size > this.maxBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.bytes -= sizeOf(previous);
    }
    while (this.bytes + size > this.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value[0]);
      this.bytes -= sizeOf(oldest.value[1]);
    }
    this.entries.set(key, entry);
    this.bytes += size;
  }

  /** Drops every chunk of one file (deleted or found damaged). */
  dropFile(path: string): void {
    const prefix = `${path}\n`;
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      this.entries.delete(key);
      this.bytes -= sizeOf(entry);
    }
  }

  get byteLength(): number {
    return this.bytes;
  }
}

function sizeOf(entry: DecodedValues): number {
  // The typed arrays plus a rough share for the map entry and key.
  return entry.steps.byteLength + entry.values.byteLength + 128;
}
