import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { gzipSync } from 'node:zlib';
import { gzipWanted } from './accept-encoding.js';
import { ApiError, messageForStatus, type ErrorEnvelope } from './errors.js';

/** Framework error codes and the status the contract gives them (docs/api.md#conventions). */
const FRAMEWORK_STATUS: Record<string, number> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 415,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 400,
  FST_ERR_CTP_EMPTY_JSON_BODY: 400,
  FST_ERR_CTP_INVALID_JSON_BODY: 400,
};

/**
 * Maps every error to the envelope. Unexpected errors become 500 and are logged with the request
 * id, which the answer repeats so a user can quote it.
 */
export function registerErrorHandler(server: FastifyInstance, logger: Logger): void {
  server.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      void reply.headers(error.headers);
      return sendEnvelope(reply, error.toEnvelope());
    }
    if (error.validation !== undefined) {
      const details = error.validation.map((issue) => {
        const path =
          issue.instancePath === ''
            ? (error.validationContext ?? 'body')
            : issue.instancePath.slice(1).replaceAll('/', '.');
        return `${path}: ${issue.message ?? 'invalid'}`;
      });
      return sendEnvelope(reply, { code: 400, message: 'Bad Request', details });
    }
    const status = FRAMEWORK_STATUS[error.code] ?? error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendEnvelope(reply, {
        code: status,
        message: messageForStatus(status),
        details: [frameworkErrorDetail(error, request)],
      });
    }
    logger.error({ err: error, reqId: request.id }, 'unexpected error while handling a request');
    return sendEnvelope(reply, {
      code: 500,
      message: 'Internal Server Error',
      details: [`request id ${String(request.id)}`],
    });
  });
}

/**
 * Sends the envelope, gzip-encoded from 1 KiB on when the client accepts it: routes that encode
 * their own answers turn @fastify/compress off, and their long 400s (one detail per bad item) must
 * be compressed all the same (docs/api.md#conventions). On other routes the plugin sees the encoding and skips.
 */
export function sendEnvelope(reply: FastifyReply, envelope: ErrorEnvelope): FastifyReply {
  // A HEAD answer has no body, so it must not claim a JSON one: clients that parse JSON by the
  // content type (the Restreamer UI's `response.json()`) would throw on the empty body. The
  // reference answers a HEAD error with the status alone, too.
  if (reply.request.method === 'HEAD') {
    reply.removeHeader('content-type');
    return reply.code(envelope.code).send();
  }
  const body = JSON.stringify(envelope);
  void reply.code(envelope.code).type('application/json; charset=utf-8');
  if (!gzipWanted(reply, Buffer.byteLength(body))) return reply.send(body);
  return reply.header('content-encoding', 'gzip').send(gzipSync(body));
}

/** Answers an ApiError from a hook or a not-found handler, where throwing is not the idiom. */
export function replyError(reply: FastifyReply, error: ApiError): FastifyReply {
  void reply.headers(error.headers);
  return sendEnvelope(reply, error.toEnvelope());
}

/** The precise reason of a framework error, with what was expected where fastify's text lacks it. */
function frameworkErrorDetail(error: FastifyError, request: FastifyRequest): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = request.headers['content-type'];
      return type === undefined
        ? 'Content-Type is missing: send application/json'
        : `Content-Type ${JSON.stringify(type)} is not accepted: send application/json`;
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `request body is larger than the limit of ${request.routeOptions.bodyLimit} bytes`;
    default:
      return error.message;
  }
}
