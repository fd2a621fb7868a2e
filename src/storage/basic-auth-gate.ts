import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { FailureDelay, LoginThrottle } from '../auth/index.js';
import { ApiError, withoutMappedPrefix } from '../http/index.js';
import { checkBasicAuth, parseBasicAuth, type BasicCredentials } from './basic-auth.js';
import type { MemfsWriteGrants } from './memfs-write-grants.js';

export interface BasicAuthGateDeps {
  /** Counts wrong credentials per address and username (`api.auth.throttle.*`). */
  throttle: LoginThrottle;
  /** The wait before a wrong guess is answered (`api.auth.throttle.delay_ms`). */
  failureDelay: FailureDelay;
  logger: Logger;
}

/** How a gate names its mount in answers and log lines. */
export interface GateLabels {
  /** `memfs`, or an S3 filesystem's name: the basic-auth realm and the log's `method`. */
  realm: string;
  /** The config keys of the credentials, for the 401's detail. */
  credentialsKey: string;
}

const MEMFS_LABELS: GateLabels = { realm: 'memfs', credentialsKey: 'storage.memory.auth' };

/** Longest username written to a log line, characters. */
const MAX_LOGGED_USERNAME = 128;

/**
 * The basic-auth check of memfs writes, throttled like `POST /api/login` (docs/auth.md#login-methods): wrong
 * credentials are counted per address and per username, answered after the failure delay, and an
 * address (or, for an address with failures of its own, a username) over the limit gets 429.
 * A request without basic credentials is answered 401 at once and not counted: ffmpeg sends its
 * first request of every upload without them and only retries after the challenge.
 * Two kinds of credentials pass: the configured ones (`storage.memory.auth`, for publishers),
 * anywhere, and an encoder run's grant (memfs-write-grants.ts), under its own paths only.
 */
export class BasicAuthGate {
  constructor(
    /** The configured credentials; writes need none while `enable` is false (read at each write). */
    private readonly expected: BasicCredentials & { readonly enable?: boolean },
    private readonly grants: MemfsWriteGrants,
    private readonly deps: BasicAuthGateDeps,
    private readonly labels: GateLabels = MEMFS_LABELS,
  ) {}

  /**
   * Whether the header carries credentials that may write the memfs file `path` (normalized;
   * undefined when the request's path is not one), without counting (for the `100 Continue`
   * decision).
   */
  accepts(header: string | undefined, path: string | undefined): boolean {
    if (this.expected.enable === false || checkBasicAuth(header, this.expected)) return true;
    const given = parseBasicAuth(header);
    return given !== undefined && path !== undefined && this.grants.decide(given, path) === 'granted';
  }

  /**
   * Resolves when `request` may write the memfs file `path`; throws the 401, 403 (a grant used
   * outside its paths) or 429 `ApiError` to answer otherwise.
   */
  async admit(request: FastifyRequest, path: string | undefined): Promise<void> {
    if (this.expected.enable === false) return;
    const given = parseBasicAuth(request.headers.authorization);
    const address = request.ip;
    const waitSec = this.deps.throttle.retryAfterSec(address, given?.username);
    if (waitSec > 0) {
      throw new ApiError(
        'TOO_MANY_REQUESTS',
        `too many failed ${this.labels.realm} logins; retry in ${waitSec} s`,
        {
          headers: { 'retry-after': String(waitSec) },
        },
      );
    }
    if (given === undefined) throw challenge(this.labels);
    const decision = checkBasicAuth(request.headers.authorization, this.expected)
      ? 'granted'
      : this.grants.decide(given, path ?? '');
    if (decision === 'granted') {
      this.deps.throttle.recordSuccess(address, given.username);
      return;
    }
    // Not counted as a failure: whoever sends it holds a live grant, and guesses nothing.
    if (decision === 'out-of-scope') {
      throw new ApiError(
        'FORBIDDEN',
        `this encoder's ${this.labels.realm} credential may write only the ${this.labels.realm} paths its outputs name, not ${path ?? 'this path'}`,
      );
    }
    this.deps.throttle.recordFailure(address, given.username);
    const shown = withoutMappedPrefix(address);
    const user = JSON.stringify(given.username.slice(0, MAX_LOGGED_USERNAME));
    this.deps.logger.warn(
      { address: shown, username: given.username.slice(0, MAX_LOGGED_USERNAME), method: this.labels.realm },
      `login failed: address=${shown} user=${user} method=${this.labels.realm} reason=wrong username or password`,
    );
    await this.deps.failureDelay.wait();
    throw challenge(this.labels);
  }
}

function challenge(labels: GateLabels): ApiError {
  return new ApiError(
    'UNAUTHORIZED',
    `${labels.realm} writes need basic auth with the ${labels.credentialsKey} credentials`,
    {
      headers: { 'www-authenticate': `Basic realm="${labels.realm}", charset="UTF-8"` },
    },
  );
}
