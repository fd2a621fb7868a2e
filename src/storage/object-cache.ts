/** One cached object: its bytes and when it was last modified. */
export interface CachedObject {
  readonly data: Buffer;
  /** Unix milliseconds. */
  readonly lastModifiedMs: number;
}

interface Entry extends CachedObject {
  /** Unix milliseconds after which the entry is not answered any more. */
  readonly expiresAtMs: number;
}

export interface ObjectCacheOptions {
  /** Bound on the bytes held, all entries together. */
  maxBytes: number;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
}

/**
 * Small objects of a remote filesystem kept in memory for a short time, so that many viewers of
 * one live stream cost one request per playlist version and segment, not one each. Bounded in
 * bytes; least recently used entries go first (a Map keeps insertion order, and a hit re-inserts).
 */
export class ObjectCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly options: ObjectCacheOptions) {}

  /** The entry for `key` while it is fresh; undefined otherwise. */
  get(key: string): CachedObject | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs <= this.options.now()) {
      this.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /** Keeps `object` for `ttlMs`, replacing any entry for `key`; too large an object is not kept. */
  set(key: string, object: CachedObject, ttlMs: number): void {
    this.delete(key);
    if (object.data.length > this.options.maxBytes) return;
    this.entries.set(key, { ...object, expiresAtMs: this.options.now() + ttlMs });
    this.bytes += object.data.length;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.data.length;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.data.length;
  }

  /** Bytes held now. */
  get sizeBytes(): number {
    return this.bytes;
  }
}
