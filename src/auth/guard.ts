import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError, isUnderPrefix, replyError } from '../http/index.js';
import '../http/route-config.js';
import type { AccessVerifier } from './access-verifier.js';

/** The one detail of every 401 from the guard (docs/auth.md#the-guard-on-apiv3). */
const INVALID_TOKEN_DETAIL = 'Missing or invalid JWT token';

/** A callback-style `onRequest` hook: no promise is allocated on the cached path. */
export type Guard = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

export function invalidTokenError(): ApiError {
  return new ApiError('UNAUTHORIZED', INVALID_TOKEN_DETAIL);
}

/**
 * The guard of `/api/v3/*` (docs/auth.md#the-guard-on-apiv3): lets a request through when its `Authorization` header
 * carries a valid access token, and answers the standard 401 otherwise. A token seen before costs a
 * map lookup; a new one is verified (HS256) and then cached until its `exp`.
 */
export function createGuard(verifier: AccessVerifier): Guard {
  return function guard(request, reply, done) {
    const header = request.headers.authorization;
    if (verifier.isCachedValid(header)) {
      done();
      return;
    }
    verifier.verify(header).then(
      (valid) => {
        if (valid) done();
        else replyError(reply, invalidTokenError());
      },
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
}

/**
 * Applies `guard` to every request whose path is `prefix` or lies below it, whichever route it
 * matched: a route of the prefix's scope, a catch-all of another module (such as a filesystem
 * mounted at `/`), or none. So an anonymous client gets 401 for every path there and cannot tell
 * which ones exist (docs/auth.md#the-guard-on-apiv3); with a valid token it gets the usual 404 or 405. Register it as a
 * root hook, so that it runs for the routes of every scope and for the not-found handler.
 */
export function createPrefixGuard(guard: Guard, prefix: string): Guard {
  return function prefixGuard(request, reply, done) {
    // A route marked public (the API description) is matched by the router, never by a catch-all.
    if (isUnderPrefix(request.url, prefix) && request.routeOptions.config.public !== true)
      guard(request, reply, done);
    else done();
  };
}
