import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MountedFilesystem, ServedFile } from './mounted-filesystem.js';

/** A GET or HEAD of an existing file on a mount, about to be answered. */
export interface ServeEvent {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly filesystem: MountedFilesystem;
  /** Path within the filesystem, e.g. `/live.m3u8` (a disk directory already resolved to its index). */
  readonly path: string;
  /** Path of the URL with the mount prefix, e.g. `/memfs/live.m3u8`. */
  readonly urlPath: string;
  readonly file: ServedFile;
}

/** A body to answer instead of the stored file (e.g. a playlist rewritten for one viewer). */
export interface ServeOverride {
  body: Buffer;
  contentType?: string;
}

/** A file written or deleted through a mount or `/api/v3/fs`. */
export interface ChangeEvent {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly filesystem: MountedFilesystem;
  readonly path: string;
  readonly urlPath: string;
  /** Bytes of the body (0 for a delete). */
  readonly bytes: number;
  /** The content written (read it during the call; never change or keep it); undefined for a delete. */
  readonly data?: Buffer;
}

/**
 * What other modules (sessions) may do around the mounts, without the mounts knowing them.
 * `beforeServe` may throw an `ApiError` (e.g. 403 or 509) to refuse the request.
 */
export interface MountHooks {
  beforeServe?(event: ServeEvent): Promise<ServeOverride | undefined> | ServeOverride | undefined;
  afterWrite?(event: ChangeEvent): void;
  afterDelete?(event: ChangeEvent): void;
}
