import type { Readable, Writable } from 'node:stream';
import type { StorageError } from './errors.js';

/**
 * A request body on its way into a filesystem: the bytes as they arrive, and the length the client
 * declared (`Content-Length`; undefined for a chunked body). Filesystems refuse what cannot fit
 * from the declared length, before reading anything, and count the bytes as they come, never
 * trusting the declaration.
 */
export interface Upload {
  readonly body: Readable;
  readonly declaredBytes: number | undefined;
}

/** What a filesystem reports of a finished upload. */
export interface UploadResult {
  created: boolean;
  /** Bytes stored. */
  bytes: number;
  /** The content, when the filesystem holds it in memory anyway (memfs); never change or keep it. */
  data?: Buffer;
}

/** Bound on a body's bytes, and the refusal once it is passed. */
export interface ByteBound {
  limitBytes: number;
  refusal: (bytes: number) => StorageError;
}

/**
 * Reads an upload into one buffer, refusing it as soon as it passes `bound` (memfs: its content is
 * memory by nature, and the bound is its size). The body is left paused on refusal, so that the
 * answer can be sent without reading the rest.
 */
export function readBounded(upload: Upload, bound: ByteBound): Promise<Buffer> {
  if (upload.declaredBytes !== undefined && upload.declaredBytes > bound.limitBytes) {
    return Promise.reject(bound.refusal(upload.declaredBytes));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const body = upload.body;
    const stop = (error: Error): void => {
      body.off('data', onData);
      body.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > bound.limitBytes) stop(bound.refusal(bytes));
      else chunks.push(chunk);
    };
    body.on('data', onData);
    body.once('error', stop);
    body.once('close', () => {
      if (!body.readableEnded) stop(new Error('the upload ended before its last byte'));
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes)));
  });
}

/**
 * Copies an upload into `target` with flat memory (the body is paused while the target is
 * busy), refusing it once it passes `bound`. On any failure (the target's error, such as ENOSPC,
 * the body's error, or the bound) the copy stops at once and the body is left paused and unread:
 * the caller answers without waiting for the rest. Resolves with the bytes copied, once `target`
 * has finished and closed (a file stream with `flush` is then on disk).
 */
export function copyBounded(upload: Upload, target: Writable, bound: ByteBound | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = upload.body;
    let bytes = 0;
    let failed = false;
    const fail = (error: Error): void => {
      if (failed) return;
      failed = true;
      body.unpipe(target);
      body.off('data', onData);
      body.pause();
      // Settled once the target has closed: the caller may then remove what it wrote.
      if (target.closed) reject(error);
      else {
        target.once('close', () => reject(error));
        target.destroy();
      }
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bound !== undefined && bytes > bound.limitBytes) fail(bound.refusal(bytes));
    };
    body.on('data', onData);
    body.once('error', fail);
    body.once('close', () => {
      // Closed without its end: the client went away mid-body.
      if (!body.readableEnded) fail(new Error('the upload ended before its last byte'));
    });
    target.once('error', fail);
    target.once('close', () => {
      if (!failed && target.writableFinished) resolve(bytes);
    });
    body.pipe(target);
  });
}
