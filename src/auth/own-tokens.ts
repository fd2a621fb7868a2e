import { randomUUID, type KeyObject } from 'node:crypto';
import { jwtVerify } from 'jose';
import { hasCanonicalSignature } from './compact-jws.js';
import { Hs256Signer } from './hs256-signer.js';

/** The `iss` of every token this server issues and the only one its guard accepts (docs/auth.md#tokens). */
const TOKEN_ISSUER = 'streamcore';

/** Longest token we try to verify, characters. Ours are about 300; anything far larger is junk. */
const MAX_TOKEN_LENGTH = 8192;

/** `{"alg":"HS256","typ":"JWT"}`, base64url: the same for every token. */
const PROTECTED_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

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
  key: KeyObject;
  /** Lifetime of access tokens, seconds (`api.auth.jwt.access_ttl_sec`). */
  accessTtlSec: number;
  /** Lifetime of refresh tokens, seconds (`api.auth.jwt.refresh_ttl_sec`). */
  refreshTtlSec: number;
  /** Wall clock, milliseconds. */
  now: () => number;
}

/**
 * Issues and verifies this server's own tokens (docs/auth.md#tokens, docs/auth.md#the-guard-on-apiv3): HS256 only, our issuer, the
 * expected `usefor`, a numeric `exp` in the future, `nbf` (if any) not in the future, and a string
 * `sub`. A claim of an unexpected type makes the token invalid; verification never throws.
 */
export class OwnTokens {
  private readonly options: OwnTokensOptions;
  private signer: Hs256Signer;

  constructor(options: OwnTokensOptions) {
    this.options = { ...options };
    this.signer = new Hs256Signer(options.key);
  }

  /**
   * Signs and verifies with a new key from now on (new credentials or secret after a configuration
   * reload): every token issued before stops being valid.
   */
  rekey(key: KeyObject): void {
    this.options.key = key;
    this.signer = new Hs256Signer(key);
  }

  issuePair(subject: string): TokenPair {
    return { access_token: this.issue(subject, 'access'), refresh_token: this.issue(subject, 'refresh') };
  }

  /**
   * A signed token (RFC 7519 compact JWS, HS256). Signed here with node:crypto (hs256-signer.ts)
   * rather than jose's `SignJWT`: that one signs through WebCrypto, an asynchronous job on the
   * thread pool, which made a login cost several times the HMAC itself (docs/auth.md#performance).
   */
  issue(subject: string, use: TokenUse): string {
    const iat = Math.floor(this.options.now() / 1000);
    const lifetime = use === 'access' ? this.options.accessTtlSec : this.options.refreshTtlSec;
    // The claims as JSON.stringify writes them (same keys, same order), spelled out: only the
    // subject needs encoding, and a template is a few times cheaper than an object stringified.
    const claims =
      `{"exi":${lifetime},"usefor":"${use}","iss":"${TOKEN_ISSUER}","sub":${JSON.stringify(subject)},` +
      `"iat":${iat},"exp":${iat + lifetime},"jti":"${randomUUID()}"}`;
    const signingInput = `${PROTECTED_HEADER}.${Buffer.from(claims).toString('base64url')}`;
    return `${signingInput}.${this.signer.sign(signingInput)}`;
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
