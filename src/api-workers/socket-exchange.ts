import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { ScannedRequest } from './request-head.js';

/**
 * What node's HTTP server sets on the pair it builds for a parsed request and reads back when the
 * answer is written (lib/_http_server.js, `parserOnIncoming` and `resOnFinish`, Node 20): not in
 * its typings, but the fields the server itself uses.
 */
interface NodeRequestInternals {
  _addHeaderLines(headers: string[], count: number): void;
}
interface NodeResponseInternals {
  _keepAliveTimeout: number;
  /** Set when the answer's head says `Connection: close`: the connection ends with it. */
  _last: boolean;
  _closed: boolean;
}

/** A request whose whole body was read before it was emitted: nothing more to read from the wire. */
class BufferedRequest extends IncomingMessage {
  override _read(): void {}
}

/**
 * Serves one request an API worker scanned (request-head.ts) to `server`, the worker's HTTP server,
 * on the socket itself: the request and response objects node's server would build from the same
 * head, without running its parser over the bytes a second time. The answer is written to the
 * socket as node writes its own (corked head and body, one writev), so a worker's answer costs
 * about what the main process's does (docs/performance.md#cost). `ended` is called once the answer
 * is with the kernel, with whether the connection goes on (`Connection: close` ends it, as node's
 * server does).
 *
 * The scanner frames only what node's parser frames alike and refuses nothing it would take
 * (`test/api-workers/request-head-differential.test.ts`); a head node's server would answer
 * without its request handler (a missing Host, an Expect, an Upgrade) never gets here.
 */
export function exchangeOnSocket(
  server: Server,
  socket: Socket,
  scan: ScannedRequest,
  body: Buffer,
  ended: (keepAlive: boolean) => void,
): void {
  const request = new BufferedRequest(socket);
  request.method = scan.method;
  request.url = scan.target;
  request.httpVersionMajor = 1;
  request.httpVersionMinor = scan.minorVersion;
  request.httpVersion = scan.minorVersion === 1 ? '1.1' : '1.0';
  (request as unknown as NodeRequestInternals)._addHeaderLines(scan.rawHeaders, scan.rawHeaders.length);

  const response = new ServerResponse(request);
  const internals = response as unknown as NodeResponseInternals;
  internals._keepAliveTimeout = server.keepAliveTimeout;
  response.shouldKeepAlive = keepsAlive(scan);
  response.assignSocket(socket);
  response.once('finish', () => {
    // A body nobody read is let go, so that its 'end' comes (node's server dumps it alike).
    if (!request.readableEnded && request.readableFlowing !== true) request.resume();
    response.detachSocket(socket);
    process.nextTick(() => {
      if (internals._closed) return;
      internals._closed = true;
      response.destroyed = true;
      response.emit('close');
    });
    if (internals._last) socket.destroySoon();
    ended(!internals._last);
  });
  // In node's order: the request is emitted at the end of its head, and its body follows, so what
  // a handler does at once sees the request incomplete, as there. Node also runs the promise jobs
  // the emit queued before it reads the body; a worker does not, so a refusal that awaited one
  // (the guard's 401) finds the body read and keeps the connection (docs/performance.md, known
  // differences).
  server.emit('request', request, response);
  if (body.length > 0) request.push(body);
  request.complete = true;
  request.push(null);
}

/**
 * Whether the client asked to keep the connection (llhttp's `should_keep_alive`): HTTP/1.1 unless
 * `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`. The scanner takes no other
 * value of Connection.
 */
function keepsAlive(scan: ScannedRequest): boolean {
  const connection = scan.headers.get('connection')?.toLowerCase();
  return scan.minorVersion === 1 ? connection !== 'close' : connection === 'keep-alive';
}
