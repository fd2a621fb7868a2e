import { Readable } from 'node:stream';
import type { S3Storage } from '../config/index.js';
import { contentTypeFor } from './content-type.js';
import { StorageError } from './errors.js';
import type { FileInfo, WriteListener } from './filesystem.js';
import { compileGlob } from './glob.js';
import type { MountedFilesystem, ServedFile } from './mounted-filesystem.js';
import type { ObjectCache } from './object-cache.js';
import { PART_BYTES, type ObjectInfo, type S3Bucket } from './s3-bucket.js';
import type { Upload, UploadResult } from './upload.js';
import { WriteListeners } from './write-listeners.js';

export interface S3FilesystemOptions {
  storage: S3Storage;
  bucket: S3Bucket;
  /** Shared by all S3 filesystems; keys are prefixed with the filesystem's name. */
  cache: ObjectCache;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  onListenerError: (error: unknown) => void;
  /** Called when a background usage listing fails (the metric keeps its last value). */
  onUsageError: (error: unknown) => void;
}

/** Objects up to this size are read whole and cached; larger ones are streamed per request, bytes. */
const CACHEABLE_BYTES = 4 * 1024 * 1024;
/** How long a playlist read from the bucket is answered from memory: written elsewhere, it may change any time. */
const READ_PLAYLIST_TTL_MS = 1000;
/** How long anything else is, and anything written through this server (its newest version). */
const CACHE_TTL_MS = 30_000;
/** How often `filesystem_usage` lists the whole bucket, at most, milliseconds. */
const USAGE_REFRESH_MS = 60_000;

/**
 * A bucket on an S3-compatible endpoint as a filesystem (docs/storage.md#s3-filesystems): API name
 * and metric label are its configured name, mounted at its mountpoint. Paths map to keys without
 * the leading `/`. Uploads up to one part go up with one request (and stay in the cache, so live
 * HLS written through the server is served without asking the bucket); larger ones stream as
 * multipart uploads. Endpoint failures reach the caller as 502/504 `ApiError`s.
 */
export class S3Filesystem implements MountedFilesystem {
  readonly type = 's3';
  readonly name: string;
  readonly metricName: string;
  readonly mount: string;
  readonly remote = true;
  private readonly listeners: WriteListeners;
  private readonly removeListeners: WriteListeners;
  /** Requests under way per key, so that many viewers of one new segment cause one request. */
  private readonly pending = new Map<string, Promise<ServedFile | undefined>>();
  private lastUsage = { usage_bytes: 0, files: 0, limit_bytes: -1 };
  private usageAtMs = Number.NEGATIVE_INFINITY;
  private usageRefresh: Promise<void> | undefined;
  private readonly uploading = new Set<Promise<unknown>>();

  constructor(private readonly options: S3FilesystemOptions) {
    this.name = options.storage.name;
    this.metricName = options.storage.name;
    this.mount = options.storage.mountpoint.replace(/\/+$/, '');
    this.listeners = new WriteListeners(options.onListenerError);
    this.removeListeners = new WriteListeners(options.onListenerError);
  }

  /** Lists with the glob's fixed start as the key prefix, so a cleanup rule lists only its own files. */
  async list(glob?: string): Promise<FileInfo[]> {
    const matcher = glob === undefined || glob === '' ? undefined : compileGlob(glob);
    const prefix = glob === undefined ? '' : fixedStartOf(glob).replace(/^\//, '');
    const objects = await this.options.bucket.list(prefix);
    const files: FileInfo[] = [];
    for (const object of objects) {
      const file = fileInfoOf(object);
      if (matcher === undefined || matcher.matches(file.name)) files.push(file);
    }
    return files;
  }

  async remove(path: string): Promise<boolean> {
    const key = keyOf(path);
    this.options.cache.delete(this.cacheKey(key));
    // S3 answers a delete of a missing key like any other; the API answers 404 for it.
    const info = await this.options.bucket.head(key);
    if (info === undefined) return false;
    await this.options.bucket.remove(key);
    this.countChange(-1, -info.sizeBytes);
    this.removeListeners.notify(path, info.sizeBytes);
    return true;
  }

  /**
   * The last usage listed, adjusted by the writes and deletes through the server since, at once:
   * a collection tick never waits for the endpoint. A listing of the whole bucket starts in the
   * background when the last one is older than a minute.
   */
  usage(): Promise<{ usage_bytes: number; files: number; limit_bytes: number }> {
    if (this.usageRefresh === undefined && this.options.now() - this.usageAtMs >= USAGE_REFRESH_MS) {
      this.usageAtMs = this.options.now();
      this.usageRefresh = this.options.bucket
        .list('')
        .then((objects) => {
          let bytes = 0;
          for (const object of objects) bytes += object.sizeBytes;
          this.lastUsage = { usage_bytes: bytes, files: objects.length, limit_bytes: -1 };
        })
        .catch(this.options.onUsageError)
        .finally(() => (this.usageRefresh = undefined));
    }
    return Promise.resolve(this.lastUsage);
  }

  onWrite(listener: WriteListener): () => void {
    return this.listeners.add(listener);
  }

  onRemove(listener: WriteListener): () => void {
    return this.removeListeners.add(listener);
  }

  open(path: string): Promise<ServedFile | undefined> {
    if (path.endsWith('/')) return Promise.resolve(undefined);
    const key = keyOf(path);
    const cached = this.options.cache.get(this.cacheKey(key));
    if (cached !== undefined)
      return Promise.resolve(servedFromMemory(path, cached.data, cached.lastModifiedMs));
    const under = this.pending.get(key);
    if (under !== undefined) return under;
    const opening = this.openFromBucket(path, key).finally(() => this.pending.delete(key));
    this.pending.set(key, opening);
    return opening;
  }

  private async openFromBucket(path: string, key: string): Promise<ServedFile | undefined> {
    const bucket = this.options.bucket;
    const info = await bucket.head(key);
    if (info === undefined) return undefined;
    if (info.sizeBytes <= CACHEABLE_BYTES) {
      const whole = await bucket.readAll(key);
      if (whole === undefined) return undefined;
      const ttl = /\.(m3u8|mpd)$/i.test(key) ? READ_PLAYLIST_TTL_MS : CACHE_TTL_MS;
      this.options.cache.set(
        this.cacheKey(key),
        { data: whole.data, lastModifiedMs: whole.info.lastModifiedMs },
        ttl,
      );
      return servedFromMemory(path, whole.data, whole.info.lastModifiedMs);
    }
    return {
      info: fileInfoOf(info),
      body: (start, end) => bucket.read(key, start, end),
      readAll: async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of await bucket.read(key, 0, info.sizeBytes - 1)) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks);
      },
    };
  }

  /**
   * Stores the body at `path`. Up to one part is read into memory and sent with one request
   * (kept in the cache when small); a longer body goes on as a multipart upload of bounded parts,
   * never held whole. Whether the object existed (201 or 204, and its old size for the usage
   * figures) is asked while the first part arrives.
   */
  upload(path: string, upload: Upload): Promise<UploadResult> {
    const running = this.store(path, upload);
    this.uploading.add(running);
    void running.then(
      () => this.uploading.delete(running),
      () => this.uploading.delete(running),
    );
    return running;
  }

  async settled(): Promise<void> {
    await Promise.allSettled([...this.uploading]);
  }

  private async store(path: string, upload: Upload): Promise<UploadResult> {
    if (path.endsWith('/')) throw new StorageError('INVALID_PATH', `${path} is a directory`);
    const key = keyOf(path);
    const cacheKey = this.cacheKey(key);
    const cached = this.options.cache.get(cacheKey);
    // The size it had (for the usage figures), or undefined when it is new.
    const previous: Promise<number | undefined> =
      cached !== undefined
        ? Promise.resolve(cached.data.length)
        : this.options.bucket.head(key).then(
            (info) => info?.sizeBytes,
            () => undefined,
          );
    const contentType = contentTypeFor(path);
    const head = await readUpTo(upload.body, PART_BYTES);
    // Answered before the object is written: asked after, it would see the new one.
    const previousBytes = await previous;
    const created = previousBytes === undefined;
    let bytes = head.bytes;
    let data: Buffer | undefined;
    if (head.ended) {
      data = Buffer.concat(head.chunks, head.bytes);
      this.options.cache.delete(cacheKey);
      await this.options.bucket.put(key, data, contentType);
      if (data.length <= CACHEABLE_BYTES) {
        this.options.cache.set(cacheKey, { data, lastModifiedMs: this.options.now() }, CACHE_TTL_MS);
      }
    } else {
      this.options.cache.delete(cacheKey);
      const counted = async function* (chunks: Buffer[], rest: Readable): AsyncGenerator<Buffer> {
        yield* chunks;
        for await (const chunk of rest) {
          bytes += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      };
      await this.options.bucket.putStream(key, Readable.from(counted(head.chunks, upload.body)), contentType);
    }
    this.countChange(created ? 1 : 0, bytes - (previousBytes ?? 0));
    this.listeners.notify(path, bytes);
    return { created, bytes, ...(data === undefined ? {} : { data }) };
  }

  /** Keeps the usage figures current between listings with what went through the server. */
  private countChange(files: number, bytes: number): void {
    const usage = this.lastUsage;
    this.lastUsage = {
      usage_bytes: Math.max(0, usage.usage_bytes + bytes),
      files: Math.max(0, usage.files + files),
      limit_bytes: -1,
    };
  }

  /** Closes the endpoint's kept-alive connections. */
  close(): void {
    this.options.bucket.close();
  }

  private cacheKey(key: string): string {
    return `${this.name}\u0000${key}`;
  }
}

/** `/a/b.ts` → `a/b.ts`. */
function keyOf(path: string): string {
  return path.slice(1);
}

function fileInfoOf(object: ObjectInfo): FileInfo {
  return { name: `/${object.key}`, size_bytes: object.sizeBytes, last_modified_ms: object.lastModifiedMs };
}

function servedFromMemory(path: string, data: Buffer, lastModifiedMs: number): ServedFile {
  return {
    info: { name: path, size_bytes: data.length, last_modified_ms: lastModifiedMs },
    body: (start, end) => data.subarray(start, end + 1),
    readAll: () => Promise.resolve(data),
  };
}

/** The part of a glob before its first special character: every match starts with it. */
function fixedStartOf(glob: string): string {
  const special = glob.search(/[*?[{\\]/);
  return special === -1 ? glob : glob.slice(0, special);
}

/**
 * Reads `body` until `limitBytes` arrived or it ended, whichever is first; then leaves it paused
 * (the rest can be iterated). Rejects when the client went away before the end.
 */
function readUpTo(
  body: Readable,
  limitBytes: number,
): Promise<{ chunks: Buffer[]; bytes: number; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const finish = (ended: boolean): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (!ended) body.pause();
      resolve({ chunks, bytes, ended });
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= limitBytes) finish(false);
    };
    const onEnd = (): void => finish(true);
    const onError = (error: Error): void => {
      body.off('data', onData);
      reject(error);
    };
    const onClose = (): void => {
      if (!body.readableEnded) onError(new Error('the upload ended before its last byte'));
    };
    body.on('data', onData);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}
