import type { FastifyInstance } from 'fastify';
import { replyError } from './error-handler.js';
import { ApiError } from './errors.js';
import { LoopbackHosts } from './loopback-host.js';
import { isUnderPrefix } from './request-path.js';
import './route-config.js';

/** Methods that only read; every other method may change state. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What stands in for authentication while `api.auth.enable` is off: only the local user may use
 * the API (issue 24 item 9, docs/security.md "A local web page"). The loopback listener alone does
 * not ensure that: every web page the local user opens can send requests to it.
 *
 * - A request under `apiPrefix` (what a token would guard; routes marked `public` excepted) must
 *   name a loopback host in `Host` (a page on a DNS name its owner re-points to 127.0.0.1 sends
 *   that name), and must not come from another origin: a cross-origin page could otherwise read
 *   the config or create processes. Its preflight is refused the same way.
 * - Anywhere else, a request from a web page (it has `Origin`) that may change state (any method
 *   but GET, HEAD, OPTIONS) is held to the same two rules: no foreign page writes into memfs.
 *
 * Both answer 403 in the envelope, with the reason in `details`. Requests without `Origin`
 * (curl, ffmpeg, a same-origin GET) are not cross-origin. Register before the CORS hook, so that a
 * refused preflight is not answered 204.
 */
export function registerLocalOnly(server: FastifyInstance, apiPrefix: string): void {
  const loopback = new LoopbackHosts();
  server.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    const guarded = isUnderPrefix(request.url, apiPrefix) && request.routeOptions.config.public !== true;
    // A page's change outside the API is held to the same rules; tools send no `Origin`.
    const checked = guarded || (origin !== undefined && !READ_METHODS.has(request.method));
    if (checked && !loopback.includes(request.headers.host)) {
      replyError(
        reply,
        new ApiError(
          'FORBIDDEN',
          `Host ${JSON.stringify(request.headers.host ?? '')} is not a loopback name or address: with api.auth.enable off, only local clients may use the API`,
        ),
      );
      return;
    }
    if (checked && origin !== undefined && !isOwnOrigin(origin, request.headers.host)) {
      replyError(
        reply,
        new ApiError(
          'FORBIDDEN',
          `Origin ${JSON.stringify(origin)} is not this server's: with api.auth.enable off, other web pages may not ${guarded ? 'use the API' : 'change anything'}`,
        ),
      );
      return;
    }
    done();
  });
}

/** Whether `Origin` names the scheme-less authority the request was sent to (`Host`). */
function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined || origin === 'null') return false;
  try {
    const own = new URL(origin);
    // Parsed with the origin's scheme, so a default port written in Host (`:80`) compares equal.
    return own.origin === origin.toLowerCase() && own.host === new URL(`${own.protocol}//${host}`).host;
  } catch {
    return false;
  }
}
