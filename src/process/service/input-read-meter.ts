import type { MountHooks, ServeEvent } from '../../storage/index.js';
import { INPUT_HEADER, parseInputHeader, type InputRef } from '../config/index.js';

/** Receives the body bytes of one completed memfs read by a process input. */
export type InputBytesSink = (ref: InputRef, bytes: number) => void;

/**
 * Counts what process inputs read from the memory filesystem: a GET of a memfs file carrying a
 * well-formed `X-Streamcore-Input` header (see memfs-inputs.ts). The bytes counted are the
 * response body (its `Content-Length`: the whole file, the range, or a body another hook put in
 * its place), once the response has been handed to the socket in full; a HEAD, a 304, a refused
 * request or a response cut short counts nothing. Unknown or malformed values are ignored here
 * and by the sink; they never fail the request.
 *
 * It must come before any hook that answers with a body of its own (serveFile stops at the
 * first override).
 */
export class InputReadMeter implements MountHooks {
  constructor(private readonly sink: InputBytesSink) {}

  beforeServe(event: ServeEvent): undefined {
    const { request, reply, filesystem } = event;
    if (filesystem.mount !== '/memfs' || request.method !== 'GET') return undefined;
    const ref = parseInputHeader(request.headers[INPUT_HEADER]);
    if (ref === undefined) return undefined;
    // Fastify keeps its headers until it writes the head at once, so the raw response has none.
    reply.raw.once('finish', () => {
      if (reply.statusCode !== 200 && reply.statusCode !== 206) return;
      const length = Number(reply.getHeader('content-length'));
      if (Number.isSafeInteger(length) && length > 0) this.sink(ref, length);
    });
    return undefined;
  }
}
