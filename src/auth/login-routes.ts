import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, JSON_CONTENT_TYPE } from '../http/index.js';
import { bearerToken } from './bearer.js';
import { withoutMappedPrefix } from '../http/index.js';
import type { FailureDelay } from './failure-delay.js';
import type { PasswordCheck } from './credentials.js';
import { invalidTokenError } from './guard.js';
import { ProviderLoginError, type IdentityProviders } from './identity-provider.js';
import { MalformedJsonBody, readLoginForm } from './login-body.js';
import type { LoginThrottle } from './login-throttle.js';
import type { OwnTokens, TokenPair } from './own-tokens.js';

/** What a login checks and issues with: the configured credentials while authentication is on. */
export interface LoginKeys {
  tokens: OwnTokens;
  passwords: PasswordCheck;
}

export interface LoginRoutesDeps {
  /** Undefined while authentication is off: then the routes answer 404, as if they did not exist. */
  protection: () => LoginKeys | undefined;
  throttle: LoginThrottle;
  /** Undefined when identity-provider login is off. */
  providers: IdentityProviders | undefined;
  /** The wait before a failed login is answered. */
  failureDelay: FailureDelay;
  /** Where refused and failed logins are reported. */
  logger: Logger;
}

/** Longest username written to a log line, characters. */
const MAX_LOGGED_USERNAME = 128;

/**
 * `POST /api/login` (docs/auth.md#login-methods) and `GET /api/login/refresh` (docs/auth.md#login-methods). They live in their own
 * scope with a lenient JSON parser: a malformed body is not an error by itself here, because an
 * identity-provider token in the header may still make the request usable.
 */
export async function registerLoginRoutes(server: FastifyInstance, deps: LoginRoutesDeps): Promise<void> {
  await server.register((scope, _options, registered) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'string' }, (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch (error) {
        done(null, new MalformedJsonBody((error as Error).message));
      }
    });
    // Registered whether authentication is on or not (a reload may turn it on); a 405 for another
    // method only while it is on.
    const config = { allowHeader: () => deps.protection() !== undefined };
    // Not compressed: a login's answer (two tokens, or an error) is always under the threshold,
    // and the plugin's onSend still costs every request a look (docs/performance.md#login).
    scope.post('/api/login', { config, compress: false }, (request, reply) =>
      whileOn(reply, deps, (keys) => login(request, keys, deps)),
    );
    scope.get('/api/login/refresh', { config }, (request, reply) =>
      whileOn(reply, deps, (keys) => refresh(request, keys)),
    );
    registered();
  });
}

/**
 * Answers what `answer` gives while authentication is on (as it gives it: a value needs no
 * promise), the 404 of an unknown route otherwise.
 */
function whileOn<T>(
  reply: FastifyReply,
  deps: LoginRoutesDeps,
  answer: (keys: LoginKeys) => T,
): T | undefined {
  const keys = deps.protection();
  if (keys !== undefined) return answer(keys);
  reply.callNotFound();
  return undefined;
}

/**
 * A password login that succeeds answers without a promise (the common case, and the one a client
 * repeats); failures, the throttle's refusal and identity-provider logins go through promises or
 * throw, which fastify answers alike.
 */
function login(
  request: FastifyRequest,
  keys: LoginKeys,
  deps: LoginRoutesDeps,
): TokenPair | Promise<TokenPair> {
  const form = readLoginForm(request.body);
  if ('username' in form) return passwordLogin(request, form.username, form.password, keys, deps);
  const token = bearerToken(request.headers.authorization);
  if (token !== undefined && deps.providers !== undefined) {
    return providerLogin(request, token, deps.providers, keys, deps);
  }
  const problems =
    token === undefined ? form.problems : [...form.problems, 'identity-provider login is not enabled'];
  throw new ApiError('BAD_REQUEST', ['Missing authorization credentials', ...problems]);
}

function passwordLogin(
  request: FastifyRequest,
  username: string,
  password: string,
  keys: LoginKeys,
  deps: LoginRoutesDeps,
): TokenPair | Promise<never> {
  const address = request.ip;
  refuseWhenThrottled(deps, address, username);
  if (keys.passwords.matches(username, password)) {
    deps.throttle.recordSuccess(address, username);
    return keys.tokens.issuePair(username);
  }
  return wrongPassword(request, deps, username);
}

async function wrongPassword(
  request: FastifyRequest,
  deps: LoginRoutesDeps,
  username: string,
): Promise<never> {
  await failLogin(request, deps, { username, method: 'password', reason: 'wrong username or password' });
  throw new ApiError('UNAUTHORIZED', 'Invalid authorization credentials: wrong username or password');
}

async function providerLogin(
  request: FastifyRequest,
  token: string,
  providers: IdentityProviders,
  keys: LoginKeys,
  deps: LoginRoutesDeps,
): Promise<TokenPair> {
  const address = request.ip;
  refuseWhenThrottled(deps, address, undefined);
  let subject: string;
  try {
    subject = await providers.verify(token);
  } catch (error) {
    if (!(error instanceof ProviderLoginError)) throw error;
    if (error.kind === 'unavailable') {
      deps.logger.warn({ address, reason: error.message }, `provider login impossible: ${error.message}`);
      throw new ApiError('SERVICE_UNAVAILABLE', `identity provider unavailable: ${error.message}`, {
        headers: { 'retry-after': String(Math.max(1, error.retryAfterSec)) },
      });
    }
    await failLogin(request, deps, {
      username: error.claimedSubject,
      method: 'provider',
      reason: error.message,
    });
    throw new ApiError('UNAUTHORIZED', `Invalid authorization credentials: ${error.message}`);
  }
  deps.throttle.recordSuccess(address, undefined);
  return keys.tokens.issuePair(subject);
}

async function refresh(request: FastifyRequest, keys: LoginKeys): Promise<{ access_token: string }> {
  const token = bearerToken(request.headers.authorization);
  const verified = token === undefined ? undefined : await keys.tokens.verify(token, 'refresh');
  if (verified === undefined) throw invalidTokenError();
  return { access_token: keys.tokens.issue(verified.subject, 'access') };
}

function refuseWhenThrottled(deps: LoginRoutesDeps, address: string, username: string | undefined): void {
  const waitSec = deps.throttle.retryAfterSec(address, username);
  if (waitSec <= 0) return;
  deps.logger.warn(
    { address: withoutMappedPrefix(address), username: loggedUsername(username), retryAfterSec: waitSec },
    `login refused: too many failures: address=${withoutMappedPrefix(address)} user=${quoted(username)}`,
  );
  throw new ApiError('TOO_MANY_REQUESTS', `too many failed logins; retry in ${waitSec} s`, {
    headers: { 'retry-after': String(waitSec) },
  });
}

/**
 * Counts a failed attempt, logs it in one line that names the address and the username (for a
 * tool like fail2ban: `login failed: address=<HOST> user="<name>" ...`), then waits the failure
 * delay. The wait is a timer, not a block: other requests are served meanwhile.
 */
async function failLogin(
  request: FastifyRequest,
  deps: LoginRoutesDeps,
  attempt: { username: string | undefined; method: 'password' | 'provider'; reason: string },
): Promise<void> {
  const address = request.ip;
  deps.throttle.recordFailure(address, attempt.method === 'password' ? attempt.username : undefined);
  const shown = withoutMappedPrefix(address);
  deps.logger.warn(
    {
      address: shown,
      username: loggedUsername(attempt.username),
      method: attempt.method,
      reason: attempt.reason,
    },
    `login failed: address=${shown} user=${quoted(attempt.username)} method=${attempt.method} reason=${attempt.reason}`,
  );
  await deps.failureDelay.wait();
}

function loggedUsername(username: string | undefined): string | undefined {
  return username === undefined ? undefined : username.slice(0, MAX_LOGGED_USERNAME);
}

/** JSON-quoted so that a crafted username cannot forge `address=` in the line; `-` when unknown. */
function quoted(username: string | undefined): string {
  return username === undefined ? '-' : JSON.stringify(username.slice(0, MAX_LOGGED_USERNAME));
}
