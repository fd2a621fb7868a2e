import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/** How long a refused body is still read and discarded after the answer, ms. */
const LINGER_MS = 1000;

/**
 * Stops reading a request's body once it was answered before its end: a refused upload (401,
 * 413, 507) or an error in the middle of one. Node would otherwise read and discard the rest to
 * keep the connection alive, so an anonymous client could make the server read a gigabyte it had
 * already refused.
 *
 * The connection is half-closed after the answer and dropped once the client has had a moment to
 * read it: a socket closed outright while the client is still sending answers the client's data
 * with a reset, which can discard the answer before the client has read it (the "lingering close"
 * of RFC 9112 §9.6). A client that stops on the answer (Node, undici, curl do, told by
 * `Connection: close`) sends nothing more; one that goes on is cut off after `LINGER_MS`.
 */
export function closeAfterUnreadBodies(server: FastifyInstance): void {
  server.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && hasBody(request.raw)) {
      // Tells the client why the connection ends; Node half-closes it after the answer.
      void reply.header('connection', 'close');
      lingerAfterAnswer(request.raw);
    }
    done(null, payload);
  });
}

/**
 * Whether the request announced a body. A request without one (a GET) can still be incomplete
 * when its answer is sent (its end not yet consumed), and must keep Node's own handling: the
 * lingering close would turn an answer that fails mid-stream into one that ends cleanly.
 */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function lingerAfterAnswer(request: IncomingMessage): void {
  const socket = request.socket;
  // Node ends the socket once the answer is written (`Connection: close`) and would destroy it
  // right after; it is dropped here instead, once the client has stopped or after `LINGER_MS`.
  socket.destroySoon = () => {
    socket.end();
    // Node discards the rest of the body meanwhile (the request is dumped).
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    request.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
  };
}
