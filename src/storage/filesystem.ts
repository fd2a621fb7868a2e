/**
 * The contract between the storage module (which owns the disk and memory filesystems) and its
 * users: the process module's cleanup rules and IO accounting, the filesystem collector, the
 * HTTP mounts. Paths are absolute within the filesystem and start with `/` (e.g. `/cam1_0001.ts`).
 */
export interface FileInfo {
  /** Path within the filesystem, starting with `/`. */
  name: string;
  size_bytes: number;
  /** Modification time, Unix milliseconds. */
  last_modified_ms: number;
}

/** Called after a file was written through the server (PUT/POST), with the bytes of the body. */
export type WriteListener = (path: string, bytes: number) => void;

export interface Filesystem {
  /** API name: `disk`, `mem`, or an S3 filesystem's configured name (docs/storage.md#the-contract). */
  readonly name: string;
  /** What `GET /api/v3/fs` answers as `type`. */
  readonly type: 'disk' | 'mem' | 's3';
  /** Metric label: `diskfs`, `memfs`, or an S3 filesystem's name. */
  readonly metricName: string;
  /**
   * Set when listing costs requests to another server (S3): cleanup lists it per rule, by the
   * rule's pattern, instead of listing everything once.
   */
  readonly remote?: boolean;
  /**
   * Resolves once the writes under way have finished (S3: a body received may still be on its
   * way to the bucket), so that a purge after an encoder's end sees its last files.
   */
  settled?(): Promise<void>;
  /** Files matching a glob (`*` within a path segment, `**` across segments); all files without one. */
  list(glob?: string): Promise<FileInfo[]>;
  /** Deletes one file; resolves false when it did not exist. */
  remove(path: string): Promise<boolean>;
  /** Bytes stored, number of files (directories excluded), limit in bytes or -1 when unlimited. */
  usage(): Promise<{ usage_bytes: number; files: number; limit_bytes: number }>;
  /** Subscribes to writes that come through the server; returns the unsubscribe function. */
  onWrite(listener: WriteListener): () => void;
  /** Subscribes to deletions (through the server, or a purge of the full memfs), with the bytes freed. */
  onRemove(listener: WriteListener): () => void;
}
