import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/index.js';
import { contentTypeFor } from './content-type.js';
import { parseRange } from './http-range.js';
import type { MountHooks, ServeEvent } from './mount-hooks.js';
import type { ServedFile } from './mounted-filesystem.js';
import { markUserFile } from './user-file-headers.js';

/**
 * Answers a GET or HEAD of a file: content type by extension, `Last-Modified`, `Content-Length`,
 * conditional `If-Modified-Since` (304) and a single byte range (206/416) (docs/storage.md#the-contract). A hook may
 * replace the body (a rewritten playlist); such a body is answered whole and never cached. Every
 * answer runs sandboxed in a browser (user-file-headers.ts).
 */
export async function serveFile(
  reply: FastifyReply,
  event: ServeEvent,
  hooks: readonly MountHooks[],
): Promise<FastifyReply> {
  const { request, file } = event;
  markUserFile(reply);
  for (const hook of hooks) {
    const answered = hook.beforeServe?.(event);
    // Most hooks answer at once (the sessions' gate while it is off, the input meter): no wait then.
    const override = answered instanceof Promise ? await answered : answered;
    if (override !== undefined) {
      void reply
        .header('cache-control', 'no-cache')
        .type(override.contentType ?? contentTypeFor(file.info.name));
      return sendBody(request, reply, () => override.body, override.body.length);
    }
  }

  return sendStoredFile(request, reply, file);
}

/**
 * Answers a GET or HEAD of `file` as it is stored: content type, validators, conditional and
 * range requests. Sets no security headers: the caller decides what the file may do in a browser.
 */
export async function sendStoredFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: ServedFile,
): Promise<FastifyReply> {
  const size = file.info.size_bytes;
  const lastModified = new Date(file.info.last_modified_ms);
  void reply
    .type(contentTypeFor(file.info.name))
    .header('last-modified', lastModified.toUTCString())
    .header('accept-ranges', 'bytes');
  if (notModified(request.headers['if-modified-since'], file.info.last_modified_ms)) {
    return reply.code(304).send();
  }
  const range = parseRange(request.headers.range, size);
  if (range === 'unsatisfiable') {
    throw new ApiError('RANGE_NOT_SATISFIABLE', `${request.headers.range ?? ''} is outside 0-${size}`, {
      headers: { 'content-range': `bytes */${size}` },
    });
  }
  if (range === undefined) {
    return sendBody(request, reply, () => (size === 0 ? Buffer.alloc(0) : file.body(0, size - 1)), size);
  }
  void reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
  return sendBody(request, reply, () => file.body(range.start, range.end), range.end - range.start + 1);
}

async function sendBody(
  request: FastifyRequest,
  reply: FastifyReply,
  body: () => Buffer | Readable | Promise<Buffer | Readable>,
  length: number,
): Promise<FastifyReply> {
  void reply.header('content-length', length);
  // HEAD never opens the body (on disk that would be a read stream for nothing).
  if (request.method === 'HEAD') return reply.send();
  const payload = await body();
  // A file that shrank since its stat: answer what is there rather than a wrong length.
  if (Buffer.isBuffer(payload) && payload.length !== length)
    void reply.header('content-length', payload.length);
  return reply.send(payload);
}

/** Whether `If-Modified-Since` is at or after the file's modification time (second precision). */
function notModified(header: string | undefined, lastModifiedMs: number): boolean {
  if (header === undefined) return false;
  const since = Date.parse(header);
  return !Number.isNaN(since) && Math.floor(lastModifiedMs / 1000) * 1000 <= since;
}
