import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError, replyError } from '../http/index.js';
import '../http/route-config.js';
import type { AccessVerifier } from './access-verifier.js';

/** The one detail of every 401 from the guard (SPEC §3.5). */
export const INVALID_TOKEN_DETAIL = 'Missing or invalid JWT token';

/** A callback-style `onRequest` hook: no promise is allocated on the cached path. */
export type Guard = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

export function invalidTokenError(): ApiError {
  return new ApiError('UNAUTHORIZED', INVALID_TOKEN_DETAIL);
}

/**
 * The guard of `/api/v3/*` (SPEC §3.5): lets a request through when its `Authorization` header
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
 * which ones exist (SPEC §3.5); with a valid token it gets the usual 404 or 405. Register it as a
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

/**
 * Whether the path of `url` is `prefix` or lies below it, as the router sees it: an absolute-form
 * target (`GET http://host/api/v3/...`, RFC 9112 §3.2.2) is reduced to its path, and escapes are
 * decoded (`/api/%763` is `/api/v3`). Decoding also what the router keeps encoded (`%2F`) only
 * makes the set of guarded paths larger. Origin-form paths without escapes take the fast exit.
 */
export function isUnderPrefix(url: string, prefix: string): boolean {
  if (url.startsWith(prefix)) return endsPrefix(url, prefix.length);
  if (url.charCodeAt(0) === 0x2f && !url.includes('%')) return false;
  const path = routedPath(url);
  return path.startsWith(prefix) && endsPrefix(path, prefix.length);
}

/** The decoded path of a request target, without scheme, authority and query. */
function routedPath(url: string): string {
  let path = url;
  if (path.charCodeAt(0) !== 0x2f) {
    const authority = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(path);
    if (authority !== null) path = path.slice(authority[0].length);
  }
  const query = path.indexOf('?');
  if (query !== -1) path = path.slice(0, query);
  try {
    return decodeURIComponent(path);
  } catch {
    // A malformed escape: the router rejects the URL; compare the raw path all the same.
    return path;
  }
}

/** Whether `text` ends right after the prefix or continues with a path separator or the query. */
function endsPrefix(text: string, prefixLength: number): boolean {
  const next = text.charCodeAt(prefixLength);
  return Number.isNaN(next) || next === 0x2f /* / */ || next === 0x3f; /* ? */
}
