import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * Reports what fastify itself sees going wrong while answering (an error on a response whose
 * headers are already out, a failing `writeHead`, a failing serializer) to the server's logger,
 * with the request id. Per-request lines (incoming, completed, routine 4xx) are not logged: one
 * line per request would drown the log of a busy server, and the envelope errors that matter are
 * logged where they are handled.
 *
 * Fastify is given no logger of its own (see server.ts), so this is the one path by which its
 * error events reach the log.
 */
export class ServerLogController extends LogController {
  constructor(private readonly logger: Logger) {
    super({ disableRequestLogging: true });
  }

  override streamError(error: Error, request: FastifyRequest): void {
    // A client that goes away mid-answer is routine (players seek, tabs close).
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    this.logger.warn({ err: error, reqId: request.id }, 'response ended with an error after its headers');
  }

  override writeHeadError(error: Error, request: FastifyRequest): void {
    this.logger.warn({ err: error, reqId: request.id }, 'response head could not be written');
  }

  override serializerError(
    error: Error,
    request: FastifyRequest,
    _reply: FastifyReply,
    metadata: { statusCode: number },
  ): void {
    this.logger.error(
      { err: error, reqId: request.id, statusCode: metadata.statusCode },
      'response body could not be serialized',
    );
  }
}
