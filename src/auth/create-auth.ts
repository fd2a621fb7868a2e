import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
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
}

/** Authentication as the app wires it (docs/api.md#identity-of-the-api, docs/auth.md). */
export interface Auth {
  /**
   * The `onRequest` hook that checks the access token (docs/auth.md#the-guard-on-apiv3); lets everything through when
   * auth is disabled. `register` applies it to every request under `/api/v3`.
   */
  readonly guard: Guard;
  /**
   * Registers `GET /api`, `GET /api/`, and, when auth is enabled, the login routes and a root
   * `onRequest` hook that guards every request whose path lies under `/api/v3`, whichever route (of
   * whichever scope) it matches, or none. Call at the root before any route it must guard is
   * registered.
   */
  register(server: FastifyInstance): Promise<void>;
  /**
   * Puts a reloaded `api.auth` into effect: new username, password and JWT secret are used from
   * now on and every token issued before is refused. Answers false, changing nothing, when the
   * change needs the next start (authentication turned on or off).
   */
  applyCredentials(settings: Config['api']['auth']): boolean;
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

const V3_PREFIX = '/api/v3';

/** Builds authentication from the config: keys, tokens, throttling, identity providers, routes. */
export async function createAuth(config: Config, deps: AuthDeps): Promise<Auth> {
  const settings = config.api.auth;
  const startedAtMs = deps.now();
  const loadedAtMs = deps.loadedAtMs ?? (() => startedAtMs);
  const serverVersion = await readServerVersion();
  const failureDelay = new FailureDelay(settings.throttle.delay_ms);
  const close = (): void => failureDelay.endAll();
  const throttleListeners: ((keys: FailingKeys) => void)[] = [];
  const onThrottleChange = (listener: (keys: FailingKeys) => void): void =>
    void throttleListeners.push(listener);

  if (!settings.enable) {
    const open: Guard = (_request, _reply, done) => done();
    return {
      guard: open,
      async register(server) {
        registerApiIdentity(
          server,
          identityOptions(config, [], { startedAtMs, loadedAtMs }, deps.now, serverVersion, undefined),
        );
        return Promise.resolve();
      },
      // Off stays off whatever the credentials are; turning it on needs the guard of a new start.
      applyCredentials: (next) => !next.enable,
      close,
      onThrottleChange,
    };
  }

  const key = deriveSigningKey(settings.jwt.secret, settings.username, settings.password);
  const tokens = new OwnTokens({
    key,
    accessTtlSec: settings.jwt.access_ttl_sec,
    refreshTtlSec: settings.jwt.refresh_ttl_sec,
    now: deps.now,
  });
  const verifier = new AccessVerifier(tokens, deps.now);
  const passwords = new PasswordCheck(settings.username, settings.password);
  const guard = createGuard(verifier);
  const providers =
    settings.auth0.enable && settings.auth0.tenants.length > 0
      ? new IdentityProviders(settings.auth0.tenants, {
          fetch: deps.fetch,
          now: deps.now,
          logger: deps.logger,
        })
      : undefined;
  const auths = ['localjwt', ...(providers?.describe() ?? [])];

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
    guard,
    async register(server) {
      registerApiIdentity(
        server,
        identityOptions(config, auths, { startedAtMs, loadedAtMs }, deps.now, serverVersion, verifier),
      );
      await registerLoginRoutes(server, {
        tokens,
        passwords,
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
    applyCredentials(next) {
      if (!next.enable) return false;
      tokens.rekey(deriveSigningKey(next.jwt.secret, next.username, next.password));
      verifier.forgetAll();
      passwords.replace(next.username, next.password);
      return true;
    },
    close,
    onThrottleChange,
  };
}

function identityOptions(
  config: Config,
  auths: string[],
  times: { startedAtMs: number; loadedAtMs: () => number },
  now: () => number,
  serverVersion: string,
  verifier: AccessVerifier | undefined,
): Parameters<typeof registerApiIdentity>[1] {
  // `config` is the running configuration, which a reload updates in place for `name`.
  return { name: () => config.name, id: config.id, auths, ...times, now, serverVersion, verifier };
}
