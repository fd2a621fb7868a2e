import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { resolveListenAddress } from '../config/index.js';
import { replyError } from './error-handler.js';
import { ApiError } from './errors.js';
import { LoopbackHosts } from './loopback-host.js';
import { isUnderPrefix } from './request-path.js';
import './route-config.js';

/** Methods that only read; every other method may change state. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const LOCAL_ONLY = 'only local clients may use the API, and other web pages may change nothing';

/** The listen addresses as configured now (the running configuration, which a reload updates). */
export interface ConfiguredListeners {
  /** `address`: the HTTP listener's. */
  address(): string;
  /** `tls.address`: the HTTPS listener's. */
  tlsAddress(): string;
}

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
 * - Any request from a peer beyond loopback is refused when it came through a listener that a
 *   start with authentication off binds to loopback (`:port`): a reload that turns authentication
 *   off narrows the listeners, but a connection accepted before is still open
 *   (docs/configuration.md#what-a-reload-applies). At a start no such peer can connect.
 *
 * Each refusal is a 403 in the envelope, with the reason in `details`. Tools send neither `Origin`
 * nor `Sec-Fetch-Site` (curl, ffmpeg, the encoders' uploads). `active` is switched by the auth
 * module together with its guard, so a request never sees one without the other.
 */
export class LocalOnly {
  private readonly loopback = new LoopbackHosts();

  constructor(
    /** True while authentication is off. */
    public active: boolean,
    private readonly apiPrefix: string,
    private readonly listeners: ConfiguredListeners,
  ) {}

  /** The hook; register before the CORS hook, so that a refused preflight is not answered 204. */
  register(server: FastifyInstance): void {
    server.addHook('onRequest', (request, reply, done) => {
      if (!this.active) return done();
      const refusal = this.refusal(request);
      if (refusal === undefined) done();
      else replyError(reply, forbidden(refusal));
    });
  }

  /**
   * The 403 for a request under the API prefix while authentication is off, or undefined when it
   * may pass (the open guard asks it again: authentication may have been turned off since this
   * request passed the hook while it was on).
   */
  apiRefusal(request: FastifyRequest): ApiError | undefined {
    const refusal = this.peerRefusal(request) ?? this.pageRefusal(request, true);
    return refusal === undefined ? undefined : forbidden(refusal);
  }

  /** Why a request is refused while authentication is off, or undefined when it may pass. */
  private refusal(request: FastifyRequest): string | undefined {
    const guarded = isUnderPrefix(request.url, this.apiPrefix) && request.routeOptions.config.public !== true;
    return this.peerRefusal(request) ?? this.pageRefusal(request, guarded);
  }

  private pageRefusal(request: FastifyRequest, guarded: boolean): string | undefined {
    const { host, origin } = request.headers;
    // A page's change outside the API is held to the same rules; tools send no `Origin`.
    if (!guarded && (origin === undefined || READ_METHODS.has(request.method))) return undefined;
    if (!this.loopback.includes(host))
      return `Host ${JSON.stringify(host ?? '')} is not a loopback name or address`;
    if (origin !== undefined && !isOwnOrigin(origin, host))
      return `Origin ${JSON.stringify(origin)} is not this server's`;
    const site = request.headers['sec-fetch-site'];
    if (guarded && site !== undefined && site !== 'same-origin' && site !== 'none') {
      return `Sec-Fetch-Site ${JSON.stringify(site)}: the request was sent on another site's behalf`;
    }
    return undefined;
  }

  private peerRefusal(request: FastifyRequest): string | undefined {
    const socket = request.raw.socket;
    const peer = socket.remoteAddress;
    if (peer === undefined || isLoopbackIp(peer)) return undefined;
    const address = 'encrypted' in socket ? this.listeners.tlsAddress() : this.listeners.address();
    const bind = resolveListenAddress(address, false);
    // A host named on purpose (`0.0.0.0:8080`) is the operator's choice, as at a start.
    if (bind !== undefined && !isLoopbackIp(bind.host) && bind.host !== 'localhost') return undefined;
    return `the client ${peer} is not on this machine`;
  }
}

function forbidden(refusal: string): ApiError {
  return new ApiError('FORBIDDEN', `${refusal}: with api.auth.enable off, ${LOCAL_ONLY}`);
}

/** A peer or bind address in 127.0.0.0/8 or `::1` (IPv4-mapped too). */
function isLoopbackIp(address: string): boolean {
  if (isIPv4(address)) return address.startsWith('127.');
  if (!isIPv6(address)) return false;
  const lower = address.toLowerCase();
  return lower === '::1' || lower.startsWith('::ffff:127.');
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
