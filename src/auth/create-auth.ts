import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { replyError, type LocalOnly } from '../http/index.js';
import type { ReloadStep } from '../lifecycle/index.js';
import { AccessVerifier } from './access-verifier.js';
import { readServerVersion, registerApiIdentity } from './api-identity.js';
import { PasswordCheck } from './credentials.js';
import { FailureDelay } from './failure-delay.js';
import { createGuard, createPrefixGuard, type Guard } from './guard.js';
import { IdentityProviders } from './identity-provider.js';
import { registerLoginRoutes } from './login-routes.js';
import { LoginThrottle } from './login-throttle.js';
import { OwnTokens } from './own-tokens.js';
import { deriveSigningKey } from './signing-key.js';

export interface AuthDeps {
  logger: Logger;
  /** Wall clock, milliseconds. */
  now: () => number;
  /** Used to fetch identity-provider key sets. */
  fetch: typeof fetch;
  /** When the configuration in effect was loaded, ms (`created_at` of `GET /api`); default: now. */
  loadedAtMs?: () => number;
  /** What stands in for authentication while it is off: switched here together with the guard. */
  localOnly: LocalOnly;
}

/** Authentication as the app wires it (docs/api.md#identity-of-the-api, docs/auth.md). */
export interface Auth {
  /**
   * Registers `GET /api`, `GET /api/`, the login routes (answered 404 while authentication is off)
   * and a root `onRequest` hook that guards every request whose path lies under `/api/v3`,
   * whichever route (of whichever scope) it matches, or none. Call at the root before any route
   * it must guard is registered.
   */
  register(server: FastifyInstance): Promise<void>;
  /**
   * The reload of `api.auth`: authentication turned on or off, and new username, password and JWT
   * secret, at once; every token issued before a change is refused. `running` is the running
   * configuration.
   */
  reloadStep(running: Config): ReloadStep<Config>;
  /** Ends pending failure delays, so shutdown does not wait for them. */
  close(): void;
  /**
   * Calls `listener` with the login throttle's failing keys after each change (the API workers
   * leave the logins they concern to this process).
   */
  onThrottleChange(listener: (keys: FailingKeys) => void): void;
}

/** Throttle keys with a failure in their window (LoginThrottle.failingKeys). */
export interface FailingKeys {
  addresses: string[];
  usernames: string[];
}

/** Authentication while it is on: what the configured credentials make. */
interface Protection {
  readonly tokens: OwnTokens;
  readonly verifier: AccessVerifier;
  readonly passwords: PasswordCheck;
  readonly guard: Guard;
}

const V3_PREFIX = '/api/v3';
const RELOAD_KEYS = ['api.auth.enable', 'api.auth.username', 'api.auth.password', 'api.auth.jwt.secret'];

/**
 * Builds authentication from the config: keys, tokens, throttling, identity providers, routes.
 * Everything is registered whether authentication is on or not, so a reload can turn it on or off
 * (docs/configuration.md#what-a-reload-applies): the guard, the login routes and `GET /api` ask
 * which protection is in effect at each request.
 */
export async function createAuth(config: Config, deps: AuthDeps): Promise<Auth> {
  const settings = config.api.auth;
  const startedAtMs = deps.now();
  const loadedAtMs = deps.loadedAtMs ?? (() => startedAtMs);
  const serverVersion = await readServerVersion();
  const failureDelay = new FailureDelay(settings.throttle.delay_ms);
  const throttleListeners: ((keys: FailingKeys) => void)[] = [];
  const onThrottleChange = (listener: (keys: FailingKeys) => void): void =>
    void throttleListeners.push(listener);
  const protect = (current: Config['api']['auth']): Protection => {
    const tokens = new OwnTokens({
      key: deriveSigningKey(current.jwt.secret, current.username, current.password),
      accessTtlSec: settings.jwt.access_ttl_sec,
      refreshTtlSec: settings.jwt.refresh_ttl_sec,
      now: deps.now,
    });
    const verifier = new AccessVerifier(tokens, deps.now);
    return {
      tokens,
      verifier,
      passwords: new PasswordCheck(current.username, current.password),
      guard: createGuard(verifier),
    };
  };
  let protection = settings.enable ? protect(settings) : undefined;
  const providers =
    settings.auth0.enable && settings.auth0.tenants.length > 0
      ? new IdentityProviders(settings.auth0.tenants, {
          fetch: deps.fetch,
          now: deps.now,
          logger: deps.logger,
        })
      : undefined;
  const protectedAuths = ['localjwt', ...(providers?.describe() ?? [])];
  const guard: Guard = (request, reply, done) => {
    if (protection !== undefined) return protection.guard(request, reply, done);
    // Asked again here: authentication may have been turned off since this request passed the
    // local-only hook while it was on.
    const refusal = deps.localOnly.apiRefusal(request);
    if (refusal === undefined) done();
    else replyError(reply, refusal);
  };

  const throttle: LoginThrottle = new LoginThrottle({
    maxFailures: settings.throttle.max_failures,
    windowSec: settings.throttle.window_sec,
    maxKeys: settings.throttle.max_tracked,
    now: deps.now,
    changed: () => {
      if (throttleListeners.length === 0) return;
      const keys = throttle.failingKeys();
      for (const listener of throttleListeners) listener(keys);
    },
  });

  return {
    async register(server) {
      registerApiIdentity(server, {
        // `config` is the running configuration, which a reload updates in place for `name`.
        name: () => config.name,
        id: config.id,
        auths: () => (protection === undefined ? [] : protectedAuths),
        startedAtMs,
        loadedAtMs,
        now: deps.now,
        serverVersion,
        verifier: () => protection?.verifier,
      });
      await registerLoginRoutes(server, {
        protection: () => protection,
        throttle,
        providers,
        failureDelay,
        logger: deps.logger,
      });
      // One root hook, decided by the request target, covers the routes of every scope, catch-all
      // mounts and unmatched paths alike. The spellings a router could map under the prefix
      // (escapes, absolute form, duplicate slashes, case) are pinned by test/auth/guard.test.ts.
      server.addHook('onRequest', createPrefixGuard(guard, V3_PREFIX));
    },
    reloadStep(running) {
      return {
        name: 'auth',
        keys: RELOAD_KEYS,
        prepare(next) {
          const built = next.api.auth.enable ? protect(next.api.auth) : undefined;
          const turned = next.api.auth.enable !== running.api.auth.enable;
          return {
            commit: () => {
              // One synchronous switch: no request sees the guard of one and the local-only rules of the other.
              protection = built;
              deps.localOnly.active = built === undefined;
              if (turned) logTurned(deps.logger, built !== undefined);
            },
            abort: () => undefined,
          };
        },
      };
    },
    close: () => failureDelay.endAll(),
    onThrottleChange,
  };
}

function logTurned(logger: Logger, on: boolean): void {
  if (on)
    logger.info(
      'api.auth.enable: authentication is on; every request under /api/v3 needs a token from now on',
    );
  else
    logger.warn(
      'api.auth.enable: authentication is off; only clients on this machine may use the API from now on (an address without a host listens on loopback)',
    );
}
