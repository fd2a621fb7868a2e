/** Longest line kept, in characters; a longer one is cut (a log line is not a data channel). */
const MAX_LINE_CHARS = 16 * 1024;

/**
 * The most recent lines the server logged, as pino wrote them (one JSON object per line), in a
 * fixed-size ring: memory stays bounded whatever is logged. Handed to pino as one of its
 * destinations (`write` is the stream contract pino's multistream calls).
 */
export class LogBuffer {
  private readonly ring: string[] = [];
  /** Where the next line goes once the ring is full. */
  private next = 0;
  private readonly listeners = new Set<(line: string) => void>();

  /** @param maxLines how many lines are kept, oldest dropped first (at least 1). */
  constructor(private readonly maxLines: number) {
    if (!Number.isInteger(maxLines) || maxLines < 1)
      throw new RangeError(`maxLines must be >= 1, got ${maxLines}`);
  }

  write(chunk: string): void {
    for (const line of chunk.split('\n')) {
      if (line === '') continue;
      const kept = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
      for (const listener of this.listeners) listener(kept);
      if (this.ring.length < this.maxLines) this.ring.push(kept);
      else {
        this.ring[this.next] = kept;
        this.next = (this.next + 1) % this.maxLines;
      }
    }
  }

  /** Tells `listener` every line from now on (the event bus); answers its removal. */
  onLine(listener: (line: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The kept lines, oldest first. */
  lines(): string[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }
}
