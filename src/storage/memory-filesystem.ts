import { StorageError } from './errors.js';
import type { FileInfo, WriteListener } from './filesystem.js';
import { compileGlob } from './glob.js';
import type { MountedFilesystem, ServedFile } from './mounted-filesystem.js';
import { readBounded, type ByteBound, type Upload, type UploadResult } from './upload.js';
import { WriteListeners } from './write-listeners.js';

export interface MemoryFilesystemOptions {
  /** Limit of the stored bytes; 0 = unlimited (docs/storage.md#the-contract). */
  maxSizeBytes: number;
  /** Delete the oldest files to make room instead of refusing a write with 507. */
  purge: boolean;
  /** Bound on one upload when `maxSizeBytes` is 0, bytes (default 1 GiB): the body is held in memory. */
  unlimitedUploadBytes?: number;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  onListenerError: (error: unknown) => void;
}

/**
 * Ceiling of one upload when memfs has no limit, bytes. The body is held in memory while it
 * arrives, so some bound is needed; 1 GiB is far above any HLS segment or recording chunk.
 */
const UNLIMITED_UPLOAD_BYTES = 1024 * 1024 * 1024;

interface MemFile {
  /** The one copy of the content, in memory of its own size; served as views, never copied per request. */
  readonly data: Buffer;
  readonly lastModifiedMs: number;
}

/**
 * The memory filesystem (`mem`, metric name `memfs`, mounted at `/memfs`). Content is lost on
 * restart. The map's insertion order is kept equal to modification order (an overwrite deletes and
 * re-inserts), so the first entries are the oldest: purging walks from the front.
 */
export class MemoryFilesystem implements MountedFilesystem {
  readonly name = 'mem';
  readonly type = 'mem';
  readonly metricName = 'memfs';
  readonly mount = '/memfs';
  private readonly files = new Map<string, MemFile>();
  private usageBytes = 0;
  private readonly listeners: WriteListeners;
  private readonly removeListeners: WriteListeners;

  constructor(private readonly options: MemoryFilesystemOptions) {
    this.listeners = new WriteListeners(options.onListenerError);
    this.removeListeners = new WriteListeners(options.onListenerError);
  }

  list(glob?: string): Promise<FileInfo[]> {
    const matcher = glob === undefined || glob === '' ? undefined : compileGlob(glob);
    const result: FileInfo[] = [];
    for (const [name, file] of this.files) {
      if (matcher !== undefined && !matcher.matches(name)) continue;
      result.push({ name, size_bytes: file.data.length, last_modified_ms: file.lastModifiedMs });
    }
    return Promise.resolve(result);
  }

  remove(path: string): Promise<boolean> {
    return Promise.resolve(this.deleteAndTell(path));
  }

  usage(): Promise<{ usage_bytes: number; files: number; limit_bytes: number }> {
    return Promise.resolve(this.usageNow());
  }

  /** Synchronous form of `usage()`. */
  usageNow(): { usage_bytes: number; files: number; limit_bytes: number } {
    const limit = this.options.maxSizeBytes;
    return { usage_bytes: this.usageBytes, files: this.files.size, limit_bytes: limit > 0 ? limit : -1 };
  }

  onWrite(listener: WriteListener): () => void {
    return this.listeners.add(listener);
  }

  onRemove(listener: WriteListener): () => void {
    return this.removeListeners.add(listener);
  }

  open(path: string): Promise<ServedFile | undefined> {
    const file = this.files.get(path);
    if (file === undefined) return Promise.resolve(undefined);
    const info: FileInfo = {
      name: path,
      size_bytes: file.data.length,
      last_modified_ms: file.lastModifiedMs,
    };
    return Promise.resolve({
      info,
      body: (start, end) => file.data.subarray(start, end + 1),
      readAll: () => Promise.resolve(file.data),
    });
  }

  /**
   * Reads `upload` into memory and stores it. What cannot fit is refused from its declared
   * length before a byte is read, and at the byte that passes the bound otherwise: the file alone
   * may not exceed the limit (`TOO_LARGE`), and without purging the free room (`NO_SPACE`). An
   * unlimited memfs holds one upload to `unlimitedUploadBytes`.
   */
  async upload(path: string, upload: Upload): Promise<UploadResult> {
    if (path.endsWith('/')) throw new StorageError('INVALID_PATH', `${path} is a directory`);
    const data = await readBounded(upload, this.boundFor(path));
    return { ...this.store(path, data), bytes: data.length, data };
  }

  /** The most an upload to `path` may hold now, and its refusal past that. */
  private boundFor(path: string): ByteBound {
    const limit = this.options.maxSizeBytes;
    if (limit <= 0) {
      const ceiling = this.options.unlimitedUploadBytes ?? UNLIMITED_UPLOAD_BYTES;
      return {
        limitBytes: ceiling,
        refusal: (bytes) =>
          new StorageError('TOO_LARGE', `${bytes} bytes exceed the upload ceiling of ${ceiling} bytes`),
      };
    }
    const free = limit - this.usageBytes + (this.files.get(path)?.data.length ?? 0);
    const tooLarge = (bytes: number): StorageError =>
      new StorageError('TOO_LARGE', `${bytes} bytes exceed the memfs limit of ${limit} bytes`);
    if (this.options.purge) return { limitBytes: limit, refusal: tooLarge };
    return {
      limitBytes: Math.min(limit, free),
      refusal: (bytes) =>
        bytes > limit
          ? tooLarge(bytes)
          : new StorageError(
              'NO_SPACE',
              `memfs is full: ${bytes} bytes do not fit, ${limit - this.usageBytes} bytes free`,
            ),
    };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async turns a throw of store() into a rejection
  async write(path: string, data: Buffer): Promise<{ created: boolean }> {
    return this.store(path, data);
  }

  /**
   * Stores `data`: the caller hands over the buffer and must not change it. It is kept as is,
   * unless it is a small view into a much larger allocation (see `ownMemoryOf`), which is copied
   * once. Throws `StorageError` TOO_LARGE when the file alone exceeds the limit, NO_SPACE when the
   * others leave no room and purging is off.
   */
  store(path: string, given: Buffer): { created: boolean } {
    if (path.endsWith('/')) throw new StorageError('INVALID_PATH', `${path} is a directory`);
    const data = ownMemoryOf(given);
    const limit = this.options.maxSizeBytes;
    const previous = this.files.get(path);
    if (limit > 0) {
      if (data.length > limit) {
        throw new StorageError('TOO_LARGE', `${data.length} bytes exceed the memfs limit of ${limit} bytes`);
      }
      const needed = this.usageBytes - (previous?.data.length ?? 0) + data.length - limit;
      if (needed > 0) {
        if (!this.options.purge) {
          throw new StorageError(
            'NO_SPACE',
            `memfs is full: ${data.length} bytes do not fit, ${limit - this.usageBytes} bytes free`,
          );
        }
        this.purgeOldest(needed, path);
      }
    }
    if (previous !== undefined) this.delete(path);
    this.files.set(path, { data, lastModifiedMs: this.options.now() });
    this.usageBytes += data.length;
    this.listeners.notify(path, data.length);
    return { created: previous === undefined };
  }

  private delete(path: string): boolean {
    const file = this.files.get(path);
    if (file === undefined) return false;
    this.files.delete(path);
    this.usageBytes -= file.data.length;
    return true;
  }

  /** A deletion the listeners are told of (an overwrite's is not: the write tells). */
  private deleteAndTell(path: string): boolean {
    const bytes = this.files.get(path)?.data.length ?? 0;
    if (!this.delete(path)) return false;
    this.removeListeners.notify(path, bytes);
    return true;
  }

  /** Deletes the oldest files other than `keep` until `bytes` are freed. */
  private purgeOldest(bytes: number, keep: string): void {
    let freed = 0;
    for (const [name, file] of this.files) {
      if (freed >= bytes) break;
      if (name === keep) continue;
      freed += file.data.length;
      this.deleteAndTell(name);
    }
  }
}

/**
 * `data` itself, or one copy of it in memory of its own when more than half of the allocation
 * behind it is not part of it. Bodies below 4 KiB (playlists) come from fastify's body parser as
 * `Buffer.concat` results, which are slices of Node's shared 8 KiB pool: stored as they are, each
 * would keep a whole pool chunk alive while memfs reports its few hundred bytes
 * (https://nodejs.org/api/buffer.html#static-method-bufferallocunsafesize). `allocUnsafeSlow`
 * never takes from the pool. So a stored file holds at most twice the memory it reports.
 */
function ownMemoryOf(data: Buffer): Buffer {
  if (data.buffer.byteLength <= 2 * data.length) return data;
  const copy = Buffer.allocUnsafeSlow(data.length);
  data.copy(copy);
  return copy;
}
