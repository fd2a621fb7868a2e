import type { FastifyInstance, FastifyRequest } from 'fastify';
import { replyError } from './error-handler.js';
import { ApiError } from './errors.js';
import { LoopbackHosts } from './loopback-host.js';
import { isUnderPrefix } from './request-path.js';
import './route-config.js';

/** Methods that only read; every other method may change state. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What stands in for authentication while `api.auth.enable` is off: only the local user may use
 * the API (issue 24 item 9, docs/security.md "A web page the local user opens"). The loopback
 * listener alone does not ensure that: every web page the local user opens can send requests to it.
 *
 * - A request under `apiPrefix` (what a token would guard; routes marked `public` excepted) must
 *   name a loopback host in `Host` (a page on a DNS name its owner re-points to 127.0.0.1 sends
 *   that name), must not come from another origin (a cross-origin page could otherwise read the
 *   config or create processes; its preflight is refused the same way), and must not be a
 *   browser's request on another site's behalf (`Sec-Fetch-Site` other than `same-origin` or
 *   `none`: an `<img>` or a link sends no `Origin`, and `GET /api/v3/config/reload` changes state).
 * - Anywhere else, a request from a web page (it has `Origin`) that may change state (any method
 *   but GET, HEAD, OPTIONS) is held to the first two rules: no foreign page writes into memfs.
 *
 * Each refusal is a 403 in the envelope, with the reason in `details`. Tools send neither `Origin`
 * nor `Sec-Fetch-Site` (curl, ffmpeg, the encoders' uploads). Register before the CORS hook, so
 * that a refused preflight is not answered 204.
 */
export function registerLocalOnly(server: FastifyInstance, apiPrefix: string): void {
  const loopback = new LoopbackHosts();
  server.addHook('onRequest', (request, reply, done) => {
    const refusal = localOnlyRefusal(request, apiPrefix, loopback);
    if (refusal === undefined) done();
    else replyError(reply, new ApiError('FORBIDDEN', `${refusal}: with api.auth.enable off, ${LOCAL_ONLY}`));
  });
}

const LOCAL_ONLY = 'only local clients may use the API, and other web pages may change nothing';

/** Why a request is refused while authentication is off, or undefined when it may pass. */
function localOnlyRefusal(
  request: FastifyRequest,
  apiPrefix: string,
  loopback: LoopbackHosts,
): string | undefined {
  const { host, origin } = request.headers;
  const guarded = isUnderPrefix(request.url, apiPrefix) && request.routeOptions.config.public !== true;
  // A page's change outside the API is held to the same rules; tools send no `Origin`.
  if (!guarded && (origin === undefined || READ_METHODS.has(request.method))) return undefined;
  if (!loopback.includes(host)) return `Host ${JSON.stringify(host ?? '')} is not a loopback name or address`;
  if (origin !== undefined && !isOwnOrigin(origin, host))
    return `Origin ${JSON.stringify(origin)} is not this server's`;
  const site = request.headers['sec-fetch-site'];
  if (guarded && site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `Sec-Fetch-Site ${JSON.stringify(site)}: the request was sent on another site's behalf`;
  }
  return undefined;
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
