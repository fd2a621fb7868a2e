import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Logger } from 'pino';
import type { Auth0Tenant } from '../config/index.js';
import { hasCanonicalSignature } from './compact-jws.js';
import { KeySetUnavailableError, RemoteKeySet } from './remote-key-set.js';

/** The only signature algorithms accepted from a provider (docs/auth.md#identity-provider-tenants). */
const PROVIDER_ALGORITHMS = ['RS256', 'ES256'] as const;

/** Longest provider token we look at, characters. */
const MAX_PROVIDER_TOKEN_LENGTH = 16 * 1024;

/** Why a provider token was not accepted. `unavailable` is the provider's fault (503), `rejected` the token's (401). */
export class ProviderLoginError extends Error {
  constructor(
    readonly kind: 'rejected' | 'unavailable',
    reason: string,
    /** The token's `sub` as claimed (unverified), for the failure log line. */
    readonly claimedSubject: string | undefined,
    /** For `unavailable`: seconds until the key set is fetched again. */
    readonly retryAfterSec = 0,
  ) {
    super(reason);
    this.name = 'ProviderLoginError';
  }
}

export interface IdentityProvidersDeps {
  fetch: typeof fetch;
  /** Wall clock, milliseconds. */
  now: () => number;
  logger: Logger;
}

interface Tenant {
  readonly config: Auth0Tenant;
  readonly issuer: string;
  readonly users: ReadonlySet<string>;
  readonly keySet: RemoteKeySet;
}

/**
 * Verifies access tokens of the configured identity-provider tenants (docs/auth.md#identity-provider-tenants): the signature
 * with the tenant key named by `kid` (RS256 or ES256), `iss`, `aud`, `exp`, `nbf`, and that `sub`
 * is one of that tenant's users. Tenants sharing a key set URL share one `RemoteKeySet`.
 */
export class IdentityProviders {
  private readonly tenants: Tenant[];

  constructor(
    tenants: readonly Auth0Tenant[],
    private readonly deps: IdentityProvidersDeps,
  ) {
    const keySets = new Map<string, RemoteKeySet>();
    this.tenants = tenants.map((config) => {
      const url = config.jwks_url ?? `https://${config.domain}/.well-known/jwks.json`;
      let keySet = keySets.get(url);
      if (keySet === undefined) {
        keySet = new RemoteKeySet({ url, fetch: deps.fetch, now: deps.now, logger: deps.logger });
        keySets.set(url, keySet);
      }
      return {
        config,
        issuer: config.issuer ?? `https://${config.domain}/`,
        users: new Set(config.users),
        keySet,
      };
    });
  }

  /** The `auths` entries of `GET /api` (docs/api.md#identity-of-the-api), in config order. */
  describe(): string[] {
    return this.tenants.map(
      ({ config }) => `auth0 domain=${config.domain} audience=${config.audience} clientid=${config.clientid}`,
    );
  }

  /**
   * The provider's subject when `token` is acceptable; throws `ProviderLoginError` otherwise.
   * Tenants may share issuer and audience yet differ in key set and users (two applications of one
   * provider account, say): every tenant matching `iss` and `aud` is tried in config order, and the
   * first whose key set verifies the signature and whose users include `sub` accepts the token.
   * Each key set keeps its own unknown-`kid` cool-down, so trying several costs no extra fetches.
   */
  async verify(token: string): Promise<string> {
    const claims = this.inspect(token);
    const claimed = typeof claims.sub === 'string' ? claims.sub : undefined;
    const byIssuer = this.tenants.filter((tenant) => tenant.issuer === claims.iss);
    if (byIssuer.length === 0) throw new ProviderLoginError('rejected', 'wrong issuer', claimed);
    const candidates = byIssuer.filter((tenant) => audienceIncludes(claims.aud, tenant.config.audience));
    let refusal: Refusal = { rank: -1, error: new ProviderLoginError('rejected', 'wrong audience', claimed) };
    for (const tenant of candidates) {
      const outcome = await this.verifyWith(tenant, token, claimed);
      if (typeof outcome === 'string') return outcome;
      if (outcome.rank > refusal.rank) refusal = outcome;
    }
    throw refusal.error;
  }

  /** The subject when `tenant` accepts the token, or why it does not. */
  private async verifyWith(
    tenant: Tenant,
    token: string,
    claimed: string | undefined,
  ): Promise<string | Refusal> {
    const reject = (rank: number, reason: string): Refusal => ({
      rank,
      error: new ProviderLoginError('rejected', reason, claimed),
    });
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, tenant.keySet.getKey, {
        algorithms: [...PROVIDER_ALGORITHMS],
        issuer: tenant.issuer,
        audience: tenant.config.audience,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(this.deps.now()),
      }));
    } catch (error) {
      if (error instanceof KeySetUnavailableError) {
        const reason = `${tenant.config.domain}: ${error.message}`;
        return {
          rank: REFUSAL_RANK.unavailable,
          error: new ProviderLoginError('unavailable', reason, claimed, error.retryAfterSec),
        };
      }
      return reject(rankOf(error), this.reasonOf(error));
    }
    const subject = payload.sub;
    if (typeof subject !== 'string' || subject === '') {
      return reject(REFUSAL_RANK.signed, '"sub" claim must be a non-empty string');
    }
    if (!tenant.users.has(subject)) return reject(REFUSAL_RANK.signed, 'user not allowed');
    return subject;
  }

  /** Structural checks before any key is fetched; returns the unverified claims for tenant choice. */
  private inspect(token: string): JWTPayload {
    const reject = (reason: string): ProviderLoginError =>
      new ProviderLoginError('rejected', reason, undefined);
    if (token.length > MAX_PROVIDER_TOKEN_LENGTH) throw reject('token too long');
    const parts = token.split('.').length;
    if (parts === 5) throw reject('a signed token is required (got an encrypted token, JWE)');
    if (parts !== 3) throw reject('malformed token (expected three dot-separated parts)');
    if (!hasCanonicalSignature(token)) throw reject('malformed token (signature not in canonical base64url)');
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw reject('malformed token header');
    }
    const alg = header.alg;
    if (typeof alg !== 'string' || !(PROVIDER_ALGORITHMS as readonly string[]).includes(alg)) {
      throw reject(`algorithm ${printable(alg)} not allowed (allowed: ${PROVIDER_ALGORITHMS.join(', ')})`);
    }
    if (typeof header.kid !== 'string' || header.kid === '') throw reject('token names no key ("kid")');
    try {
      return decodeJwt(token);
    } catch {
      throw reject('malformed token payload');
    }
  }

  private reasonOf(error: unknown): string {
    if (error instanceof errors.JWTExpired) return 'token expired';
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'nbf') return 'token not valid yet ("nbf" is in the future)';
      if (error.claim === 'iss') return 'wrong issuer';
      if (error.claim === 'aud') return 'wrong audience';
      if (error.reason === 'missing') return `missing claim ${printable(error.claim)}`;
      return `invalid claim ${printable(error.claim)}`;
    }
    if (error instanceof errors.JWKSNoMatchingKey) return 'unknown key ("kid" not in the provider key set)';
    if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
    if (error instanceof errors.JWKSMultipleMatchingKeys) return 'bad signature';
    if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
    if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'malformed token';
    if (error instanceof errors.JOSENotSupported || error instanceof errors.JWKSInvalid) {
      return 'the provider key for this token is unusable';
    }
    this.deps.logger.error({ err: error }, 'unexpected error while verifying an identity-provider token');
    return 'token could not be verified';
  }
}

/** Why one tenant did not accept a token; of several, the highest rank is answered. */
interface Refusal {
  rank: number;
  error: ProviderLoginError;
}

/**
 * How far a token got with a tenant. A refusal after the signature verified (expired, user not
 * allowed) says most; a key set that could not be fetched comes next, since that tenant might have
 * accepted the token (503, retry later); then a key that did not verify; last, a `kid` the tenant's
 * key set lacks, which only says that the token is not that tenant's.
 */
const REFUSAL_RANK = { unknownKey: 0, notVerified: 1, unavailable: 2, signed: 3 } as const;

function rankOf(error: unknown): number {
  if (error instanceof errors.JWKSNoMatchingKey) return REFUSAL_RANK.unknownKey;
  // jose checks the claims only after the signature verified.
  if (error instanceof errors.JWTExpired || error instanceof errors.JWTClaimValidationFailed) {
    return REFUSAL_RANK.signed;
  }
  return REFUSAL_RANK.notVerified;
}

function audienceIncludes(aud: unknown, audience: string): boolean {
  return aud === audience || (Array.isArray(aud) && aud.includes(audience));
}

/** A claim or header value for a message: JSON, at most 64 characters. */
function printable(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}
