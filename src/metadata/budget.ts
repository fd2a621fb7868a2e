import { ApiError } from '../http/index.js';

/**
 * The bound on all metadata together (`api.limits.max_metadata_bytes`): every process's and the
 * server's, as JSON. Each owner's size is known from the check of its last change, so a change
 * costs no walk over the others.
 */
export class MetadataBudget {
  private readonly bytesByOwner = new Map<string, number>();
  private totalBytes = 0;

  /** `limitBytes`: `api.limits.max_metadata_bytes`. */
  constructor(private readonly limitBytes: number) {}

  /** Bytes of `owner`'s metadata as last recorded (0 when none). */
  bytesOf(owner: string): number {
    return this.bytesByOwner.get(owner) ?? 0;
  }

  /** Throws the 507 naming the limit when `owner`'s metadata growing to `bytes` would pass it. */
  check(owner: string, bytes: number): void {
    const next = this.totalBytes - this.bytesOf(owner) + bytes;
    if (bytes > this.bytesOf(owner) && next > this.limitBytes) {
      throw new ApiError(
        'INSUFFICIENT_STORAGE',
        `api.limits.max_metadata_bytes: all metadata together would take ${next} bytes as JSON, at most ${this.limitBytes} allowed`,
        { message: 'Metadata budget exhausted' },
      );
    }
  }

  /** Records `owner`'s size, bytes (0 forgets it). */
  record(owner: string, bytes: number): void {
    this.totalBytes += bytes - this.bytesOf(owner);
    if (bytes === 0) this.bytesByOwner.delete(owner);
    else this.bytesByOwner.set(owner, bytes);
  }

  /** Moves what `from` holds to `to` (a renamed process keeps its metadata). */
  move(from: string, to: string): void {
    const bytes = this.bytesOf(from);
    this.record(from, 0);
    this.record(to, bytes);
  }
}

/** The budget's owner name of a process's metadata. */
export function processOwner(id: string): string {
  return `process:${id}`;
}

/** The budget's owner name of the server-wide metadata. */
export const SYSTEM_OWNER = 'system';
