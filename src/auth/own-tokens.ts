import { randomUUID } from 'node:crypto';
import type { CryptoKey } from 'jose';
import { jwtVerify, SignJWT } from 'jose';
import { hasCanonicalSignature } from './compact-jws.js';

/** The `iss` of every token this server issues and the only one its guard accepts (SPEC §3.1). */
export const TOKEN_ISSUER = 'streamcore';

/** Longest token we try to verify, characters. Ours are about 300; anything far larger is junk. */
export const MAX_TOKEN_LENGTH = 8192;

export type TokenUse = 'access' | 'refresh';

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

/** What a verified token of ours says. */
export interface VerifiedToken {
  subject: string;
  /** `exp`, Unix seconds. */
  expiresAtSec: number;
}

export interface OwnTokensOptions {
  /** HS256 key from `deriveSigningKey`. */
  key: CryptoKey;
  /** Lifetime of access tokens, seconds (`api.auth.jwt.access_ttl_sec`). */
  accessTtlSec: number;
  /** Lifetime of refresh tokens, seconds (`api.auth.jwt.refresh_ttl_sec`). */
  refreshTtlSec: number;
  /** Wall clock, milliseconds. */
  now: () => number;
}

/**
 * Issues and verifies this server's own tokens (SPEC §3.1, §3.5): HS256 only, our issuer, the
 * expected `usefor`, a numeric `exp` in the future, `nbf` (if any) not in the future, and a string
 * `sub`. A claim of an unexpected type makes the token invalid; verification never throws.
 */
export class OwnTokens {
  constructor(private readonly options: OwnTokensOptions) {}

  async issuePair(subject: string): Promise<TokenPair> {
    const [access_token, refresh_token] = await Promise.all([
      this.issue(subject, 'access'),
      this.issue(subject, 'refresh'),
    ]);
    return { access_token, refresh_token };
  }

  async issue(subject: string, use: TokenUse): Promise<string> {
    const iat = Math.floor(this.options.now() / 1000);
    const lifetime = use === 'access' ? this.options.accessTtlSec : this.options.refreshTtlSec;
    return new SignJWT({ exi: lifetime, usefor: use })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(TOKEN_ISSUER)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetime)
      .setJti(randomUUID())
      .sign(this.options.key);
  }

  /** The token's subject and expiry when it is a valid token of ours for `use`, else undefined. */
  async verify(token: string, use: TokenUse): Promise<VerifiedToken | undefined> {
    if (token.length > MAX_TOKEN_LENGTH || !hasCanonicalSignature(token)) return undefined;
    try {
      const { payload } = await jwtVerify(token, this.options.key, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        requiredClaims: ['exp', 'sub', 'usefor'],
        currentDate: new Date(this.options.now()),
      });
      const { sub, exp, usefor } = payload;
      if (usefor !== use || typeof sub !== 'string' || sub === '') return undefined;
      // jose has checked that exp is a number in the future; a non-finite one is not ours.
      if (typeof exp !== 'number' || !Number.isFinite(exp)) return undefined;
      return { subject: sub, expiresAtSec: exp };
    } catch {
      // Every jose error (bad signature, wrong alg, expired, malformed, wrong claim type) means "invalid".
      return undefined;
    }
  }
}
