import type { FastifyInstance } from 'fastify';
import { addVary } from './vary.js';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS';
/** The methods a preflight may grant while authentication is off: none that changes state. */
const READ_METHODS = 'GET, HEAD, OPTIONS';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Range, Accept, Accept-Encoding';
/** Not CORS-safelisted, but players and clients read them (ranges, throttled logins). */
const EXPOSED_HEADERS = 'Content-Length, Content-Range, Retry-After';
/** How long a browser may cache a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE_SEC = '86400';

/**
 * Which origins may read the server's answers (config `storage.cors.origins`): empty or containing
 * `*` allows any origin; otherwise a listed `Origin` is echoed and answers vary by `Origin`.
 */
export class CorsPolicy {
  /** `Access-Control-Allow-Origin: *` for every answer; then no `Vary: Origin` is needed. */
  readonly anyOrigin: boolean;
  private readonly allowed: Set<string>;
  /** The headers of an ordinary answer, as name/value pairs in one flat list, per allowed origin. */
  private readonly answerHeadersByOrigin = new Map<string, readonly string[]>();
  private readonly anyOriginHeaders = answerHeadersFor('*');

  /**
   * `origins` from `storage.cors.origins`. `readsOnly` (authentication off): preflights are granted
   * for GET and HEAD only, so no other origin's page can be allowed a request that changes state
   * (local-only.ts refuses those that need no preflight).
   */
  constructor(
    origins: readonly string[],
    readonly readsOnly = false,
  ) {
    this.anyOrigin = origins.length === 0 || origins.includes('*');
    this.allowed = new Set(origins);
    for (const origin of origins) this.answerHeadersByOrigin.set(origin, answerHeadersFor(origin));
  }

  /**
   * The CORS headers of an answer that is not a preflight, as `[name, value, name, value]`:
   * none for an origin that is not allowed. Precomputed: the same list on every call. With listed
   * origins the answer also varies by `Origin` (`anyOrigin` false), which the caller adds to `Vary`.
   */
  answerHeaders(origin: string | undefined): readonly string[] {
    if (this.anyOrigin) return this.anyOriginHeaders;
    return (origin !== undefined ? this.answerHeadersByOrigin.get(origin) : undefined) ?? NO_HEADERS;
  }

  /** Whether a preflight may grant `method` (`Access-Control-Request-Method`). */
  grantsMethod(method: string): boolean {
    return !this.readsOnly || method === 'GET' || method === 'HEAD';
  }

  /** The allowed origin for a request's `Origin`, or undefined when it is not allowed. */
  allowOrigin(origin: string | undefined): string | undefined {
    if (this.anyOrigin) return '*';
    return origin !== undefined && this.allowed.has(origin) ? origin : undefined;
  }
}

const NO_HEADERS: readonly string[] = [];

function answerHeadersFor(allowedOrigin: string): readonly string[] {
  return ['access-control-allow-origin', allowedOrigin, 'access-control-expose-headers', EXPOSED_HEADERS];
}

/**
 * CORS on every route (docs/api.md#conventions): preflight requests are answered here, before any guard, so they
 * need no authentication; other responses carry the allowed origin, and `Vary: Origin` when the
 * policy lists origins.
 *
 * Written instead of @fastify/cors because this runs on every request, HLS segments included: the
 * headers are precomputed once, and the hook does one header lookup and one or two header writes
 * (the plugin resolved its options per request and cost ~15 % of a small API answer's throughput).
 * `current` answers the policy in force (a reload replaces it). Register before any guard, so that a preflight never reaches one (only local-only.ts, with
 * authentication off, comes first: it refuses foreign pages before CORS could answer them).
 */
export function registerCors(server: FastifyInstance, current: () => CorsPolicy): void {
  server.addHook('onRequest', (request, reply, done) => {
    // Asked per request: a reload replaces the policy (storage.cors.origins).
    const policy = current();
    const anyOrigin = policy.anyOrigin;
    const origin = request.headers.origin;
    const preflightMethod = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && preflightMethod !== undefined) {
      const allowedOrigin = policy.grantsMethod(preflightMethod) ? policy.allowOrigin(origin) : undefined;
      if (!anyOrigin) addVary(reply, 'Origin');
      if (allowedOrigin !== undefined) {
        void reply.headers({
          'access-control-allow-origin': allowedOrigin,
          'access-control-allow-methods': policy.readsOnly ? READ_METHODS : ALLOWED_METHODS,
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_SEC,
        });
      }
      // A disallowed origin gets the same 204 without the allow headers: the browser refuses it.
      void reply.code(204).send();
      return;
    }
    // With `*` for every answer no `Vary: Origin` is needed. Direct writes, because
    // `reply.headers(object)` walks the object's keys on every request.
    if (!anyOrigin) addVary(reply, 'Origin');
    const headers = policy.answerHeaders(origin);
    for (let i = 0; i < headers.length; i += 2) void reply.header(headers[i] as string, headers[i + 1]);
    done();
  });
}
