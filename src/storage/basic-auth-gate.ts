import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { FailureDelay, LoginThrottle } from '../auth/index.js';
import { ApiError, withoutMappedPrefix } from '../http/index.js';
import { checkBasicAuth, parseBasicAuth, type BasicCredentials } from './basic-auth.js';

export interface BasicAuthGateDeps {
  /** Counts wrong credentials per address and username (`api.auth.throttle.*`). */
  throttle: LoginThrottle;
  /** The wait before a wrong guess is answered (`api.auth.throttle.delay_ms`). */
  failureDelay: FailureDelay;
  logger: Logger;
}

/** Longest username written to a log line, characters. */
const MAX_LOGGED_USERNAME = 128;

/**
 * The basic-auth check of memfs writes, throttled like `POST /api/login` (SPEC §3.2): wrong
 * credentials are counted per address and per username, answered after the failure delay, and an
 * address (or, for an address with failures of its own, a username) over the limit gets 429.
 * A request without basic credentials is answered 401 at once and not counted: ffmpeg sends its
 * first request of every upload without them and only retries after the challenge.
 */
export class BasicAuthGate {
  constructor(
    private readonly expected: BasicCredentials,
    private readonly deps: BasicAuthGateDeps,
  ) {}

  /** Whether the header carries the credentials, without counting (for the `100 Continue` decision). */
  accepts(header: string | undefined): boolean {
    return checkBasicAuth(header, this.expected);
  }

  /** Resolves when `request` may write; throws the 401 or 429 `ApiError` to answer otherwise. */
  async admit(request: FastifyRequest): Promise<void> {
    const given = parseBasicAuth(request.headers.authorization);
    const address = request.ip;
    const waitSec = this.deps.throttle.retryAfterSec(address, given?.username);
    if (waitSec > 0) {
      throw new ApiError('TOO_MANY_REQUESTS', `too many failed memfs logins; retry in ${waitSec} s`, {
        headers: { 'retry-after': String(waitSec) },
      });
    }
    if (given === undefined) throw challenge();
    if (this.accepts(request.headers.authorization)) {
      this.deps.throttle.recordSuccess(address, given.username);
      return;
    }
    this.deps.throttle.recordFailure(address, given.username);
    const shown = withoutMappedPrefix(address);
    const user = JSON.stringify(given.username.slice(0, MAX_LOGGED_USERNAME));
    this.deps.logger.warn(
      { address: shown, username: given.username.slice(0, MAX_LOGGED_USERNAME), method: 'memfs' },
      `login failed: address=${shown} user=${user} method=memfs reason=wrong username or password`,
    );
    await this.deps.failureDelay.wait();
    throw challenge();
  }
}

function challenge(): ApiError {
  return new ApiError(
    'UNAUTHORIZED',
    'memfs writes need basic auth with the storage.memory.auth credentials',
    {
      headers: { 'www-authenticate': 'Basic realm="memfs", charset="UTF-8"' },
    },
  );
}
