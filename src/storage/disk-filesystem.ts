import { createReadStream, createWriteStream } from 'node:fs';
import { makeDirectory } from '../persistence/make-dir.js';
import { lstat, mkdir, open, readFile, readdir, realpath, rename, rm, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, sep } from 'node:path';
import { StorageError } from './errors.js';
import type { FileInfo, WriteListener } from './filesystem.js';
import { compileGlob } from './glob.js';
import type { MountedFilesystem, ServedFile } from './mounted-filesystem.js';
import { copyBounded, type ByteBound, type Upload, type UploadResult } from './upload.js';
import { WriteListeners } from './write-listeners.js';

export interface DiskFilesystemOptions {
  /** Absolute root directory (`storage.disk.dir`); created when missing. */
  root: string;
  /** Limit for writes through the server, bytes; 0 = unlimited (`storage.disk.max_size_mbytes`). */
  maxSizeBytes: number;
  /**
   * How long a walk of the tree for `usage()` is reused, milliseconds. Processes write files
   * behind the server's back, so the figure is re-measured, but not on every collection tick of a
   * possibly huge tree; writes and deletes through the server adjust it in between.
   */
  usageCacheMs: number;
  /** Wall clock, Unix milliseconds. */
  now: () => number;
  onListenerError: (error: unknown) => void;
}

/**
 * Parts up to this size are read into memory at once instead of streamed: a known length keeps
 * `Content-Length` and lets the compression threshold apply to small text files.
 */
const SMALL_READ_BYTES = 64 * 1024;

interface Usage {
  usage_bytes: number;
  files: number;
}

/**
 * The disk filesystem (`disk`, metric name `diskfs`, mounted at `/`). Every access resolves the
 * real path (symlinks followed) and refuses anything outside the real root, so a symlink placed
 * in the tree cannot expose the rest of the machine. Listing and usage skip symlinks.
 * Just past 300 lines: every operation goes through the same real-root checks (`resolveInside`,
 * `makeParent`) and keeps the cached usage true; the copy of an upload is upload.ts's.
 */
export class DiskFilesystem implements MountedFilesystem {
  readonly name = 'disk';
  readonly type = 'disk';
  readonly metricName = 'diskfs';
  readonly mount = '/';
  private realRoot = '';
  private readonly listeners: WriteListeners;
  private readonly removeListeners: WriteListeners;
  private cachedUsage: { value: Usage; atMs: number } | undefined;
  private usageWalk: Promise<Usage> | undefined;

  constructor(private readonly options: DiskFilesystemOptions) {
    this.listeners = new WriteListeners(options.onListenerError);
    this.removeListeners = new WriteListeners(options.onListenerError);
  }

  /** Creates the root when missing and remembers its real path. Call once before use. */
  async init(): Promise<void> {
    await makeDirectory(this.options.root);
    this.realRoot = await realpath(this.options.root);
  }

  /** The real absolute root directory. */
  get root(): string {
    return this.realRoot;
  }

  async list(glob?: string): Promise<FileInfo[]> {
    const matcher = glob === undefined || glob === '' ? undefined : compileGlob(glob);
    const result: FileInfo[] = [];
    await this.walk(this.realRoot, '', (name, size, mtimeMs) => {
      if (matcher === undefined || matcher.matches(name)) {
        result.push({ name, size_bytes: size, last_modified_ms: Math.floor(mtimeMs) });
      }
    });
    return result;
  }

  /**
   * Removes the entry at `path` itself: a symlink is unlinked, never its target (which may lie
   * elsewhere in the tree or outside it). Only the directories above it are resolved, and they must
   * lie inside the root. Directories are not removed.
   */
  async remove(path: string): Promise<boolean> {
    const name = basename(path);
    if (name === '' || path.endsWith('/')) return false;
    const parent = await this.resolveInside(dirname(join('/', path)));
    if (parent === undefined) return false;
    const target = join(parent, name);
    const stats = await lstat(target).catch(() => undefined);
    if (stats === undefined || !(stats.isFile() || stats.isSymbolicLink())) return false;
    await unlink(target).catch((error: NodeJS.ErrnoException) => {
      // Gone meanwhile (an encoder rotating segments): as if it had not been there.
      if (error.code !== 'ENOENT') throw error;
    });
    // Usage counts regular files only (symlinks are skipped by the walk).
    if (stats.isFile()) this.adjustUsage(-stats.size, -1);
    this.removeListeners.notify(path, stats.isFile() ? stats.size : 0);
    return true;
  }

  async usage(): Promise<{ usage_bytes: number; files: number; limit_bytes: number }> {
    const value = await this.currentUsage();
    const limit = this.options.maxSizeBytes;
    return { ...value, limit_bytes: limit > 0 ? limit : -1 };
  }

  onWrite(listener: WriteListener): () => void {
    return this.listeners.add(listener);
  }

  onRemove(listener: WriteListener): () => void {
    return this.removeListeners.add(listener);
  }

  async open(path: string): Promise<ServedFile | undefined> {
    let target = await this.resolveInside(path);
    if (target === undefined) return undefined;
    let stats = await stat(target).catch(() => undefined);
    let servedPath = path;
    if (stats?.isDirectory() === true) {
      servedPath = `${path.endsWith('/') ? path : `${path}/`}index.html`;
      target = await this.resolveInside(servedPath);
      if (target === undefined) return undefined;
      stats = await stat(target).catch(() => undefined);
    }
    if (stats === undefined || !stats.isFile()) return undefined;
    const file = target;
    return {
      info: { name: servedPath, size_bytes: stats.size, last_modified_ms: Math.floor(stats.mtimeMs) },
      body: (start, end) =>
        end - start + 1 <= SMALL_READ_BYTES
          ? readPart(file, start, end)
          : createReadStream(file, { start, end }),
      readAll: () => readFile(file),
    };
  }

  /**
   * Streams `upload` into a temporary file beside the target (fsynced), then renames it over the
   * target, so a reader never sees a half-written file and memory stays flat whatever the size.
   * Refuses from the declared length what cannot fit under `maxSizeBytes`, and stops at the byte
   * that passes it. A full device (ENOSPC, EDQUOT) is `NO_SPACE` at once; the temporary file is
   * removed on every failure.
   */
  async upload(path: string, upload: Upload): Promise<UploadResult> {
    if (path.endsWith('/') || path === '/') throw new StorageError('INVALID_PATH', `${path} is a directory`);
    const parent = await this.makeParent(path);
    const target = join(parent, basename(path));
    const previous = await lstat(target).catch(() => undefined);
    if (previous !== undefined && !previous.isFile()) {
      throw new StorageError('INVALID_PATH', `${path} is not a regular file`);
    }
    const previousSize = previous?.size ?? 0;
    const bound = await this.boundFor(previousSize);
    if (
      bound !== undefined &&
      upload.declaredBytes !== undefined &&
      upload.declaredBytes > bound.limitBytes
    ) {
      throw bound.refusal(upload.declaredBytes);
    }
    const temporary = join(parent, `.${randomBytes(6).toString('hex')}.upload`);
    let bytes: number;
    try {
      // `flush`: fsynced before it closes, so the rename never publishes a file still in the cache.
      bytes = await copyBounded(upload, createWriteStream(temporary, { flags: 'wx', flush: true }), bound);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw asStorageError(error);
    }
    this.adjustUsage(bytes - previousSize, previous === undefined ? 1 : 0);
    this.listeners.notify(path, bytes);
    return { created: previous === undefined, bytes };
  }

  /**
   * Creates the directories above `path` one level at a time and returns the parent's real path.
   * Each level's real path is checked before anything is created below it, so a symlink that
   * points out of the root can never make the server create directories outside it.
   */
  private async makeParent(path: string): Promise<string> {
    const levels = dirname(join('/', path))
      .split('/')
      .filter((level) => level !== '');
    let current = this.realRoot;
    for (const [index, level] of levels.entries()) {
      const next = join(current, level);
      let real = await realpath(next).catch(() => undefined);
      if (real === undefined) {
        await mkdir(next).catch((error: NodeJS.ErrnoException) => {
          // A concurrent writer may have created it; a dangling symlink stays an error below.
          if (error.code !== 'EEXIST') throw error;
        });
        real = await realpath(next).catch(() => undefined);
      }
      if (real === undefined || !this.isInside(real)) {
        throw new StorageError('INVALID_PATH', `${path} is outside the filesystem`);
      }
      if (!(await stat(real)).isDirectory()) {
        const file = `/${levels.slice(0, index + 1).join('/')}`;
        throw new StorageError('NOT_A_DIRECTORY', `${file} is a file, so ${path} cannot be written`);
      }
      current = real;
    }
    return current;
  }

  /**
   * How many bytes an upload replacing a file of `replacedBytes` may have under `maxSizeBytes`
   * (undefined: no limit): more than the limit is `TOO_LARGE`, more than the free room `NO_SPACE`.
   */
  private async boundFor(replacedBytes: number): Promise<ByteBound | undefined> {
    const limit = this.options.maxSizeBytes;
    if (limit <= 0) return undefined;
    const { usage_bytes } = await this.currentUsage();
    const free = Math.max(0, limit - usage_bytes + replacedBytes);
    return {
      limitBytes: Math.min(limit, free),
      refusal: (bytes) =>
        bytes > limit
          ? new StorageError('TOO_LARGE', `${bytes} bytes exceed the disk limit of ${limit} bytes`)
          : new StorageError(
              'NO_SPACE',
              `disk is full: ${bytes} bytes do not fit, ${Math.max(0, limit - usage_bytes)} bytes free`,
            ),
    };
  }

  /** Absolute real path for `path` when it lies inside the root, following symlinks; else undefined. */
  private async resolveInside(path: string): Promise<string | undefined> {
    const absolute = join(this.realRoot, path);
    const real = await realpath(absolute).catch(() => undefined);
    if (real === undefined || !this.isInside(real)) return undefined;
    return real;
  }

  private isInside(real: string): boolean {
    return real === this.realRoot || real.startsWith(this.realRoot + sep);
  }

  private currentUsage(): Promise<Usage> {
    const cached = this.cachedUsage;
    if (cached !== undefined && this.options.now() - cached.atMs < this.options.usageCacheMs) {
      return Promise.resolve(cached.value);
    }
    // Single flight: concurrent callers share one walk.
    this.usageWalk ??= this.measureUsage().finally(() => {
      this.usageWalk = undefined;
    });
    return this.usageWalk;
  }

  private async measureUsage(): Promise<Usage> {
    const value: Usage = { usage_bytes: 0, files: 0 };
    await this.walk(this.realRoot, '', (_name, size) => {
      value.usage_bytes += size;
      value.files += 1;
    });
    this.cachedUsage = { value, atMs: this.options.now() };
    return value;
  }

  private adjustUsage(bytes: number, files: number): void {
    if (this.cachedUsage === undefined) return;
    const value = this.cachedUsage.value;
    this.cachedUsage.value = {
      usage_bytes: Math.max(0, value.usage_bytes + bytes),
      files: Math.max(0, value.files + files),
    };
  }

  /** Visits every regular file below `dir` (symlinks skipped); `prefix` is `dir`'s filesystem path. */
  private async walk(
    dir: string,
    prefix: string,
    visit: (name: string, size: number, mtimeMs: number) => void,
  ): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const absolute = join(dir, entry.name);
      const name = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        await this.walk(absolute, name, visit);
      } else if (entry.isFile()) {
        // A file may vanish between readdir and stat (an encoder rotating segments).
        const stats = await stat(absolute).catch(() => undefined);
        if (stats !== undefined) visit(name, stats.size, stats.mtimeMs);
      }
    }
  }
}

/** A full device as the storage refusal it is (507); any other error as it was. */
function asStorageError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new StorageError('NO_SPACE', `the disk is full (${code}); nothing was written`);
  }
  return error;
}

async function readPart(file: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(end - start + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    return bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
