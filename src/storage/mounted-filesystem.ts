import type { Readable } from 'node:stream';
import type { FileInfo, Filesystem } from './filesystem.js';
import type { Upload, UploadResult } from './upload.js';

/** A file ready to be served: its metadata and access to its bytes. */
export interface ServedFile {
  /** `name` is the path actually served (on disk, a directory resolves to its `index.html`). */
  readonly info: FileInfo;
  /**
   * Bytes `start..end` (inclusive). memfs answers a view of the stored buffer (no copy, however
   * many viewers), disk a read stream (or, for small parts, the bytes read at once), S3 a stream
   * once the endpoint answered.
   */
  body(start: number, end: number): Buffer | Readable | Promise<Buffer | Readable>;
  /** The whole content in memory; meant for small files such as playlists. */
  readAll(): Promise<Buffer>;
}

/** What the HTTP mounts and `/api/v3/fs` need of a filesystem beyond the shared contract. */
export interface MountedFilesystem extends Filesystem {
  /** Where it is served over HTTP: `/` for disk, `/memfs` for mem, the mountpoint for S3. */
  readonly mount: string;
  /** The file at `path` (a clean path from `normalizeFilePath`), or undefined when there is none. */
  open(path: string): Promise<ServedFile | undefined>;
  /**
   * Stores the body of `upload` at `path`, replacing an existing file. Rejects with a
   * `StorageError` when the limit forbids it (from the declared length, before reading, when it
   * can) or the path is not writable; the body is then left unread.
   */
  upload(path: string, upload: Upload): Promise<UploadResult>;
}
