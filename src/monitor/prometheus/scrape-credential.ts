import { createHash, timingSafeEqual } from 'node:crypto';

/** Config `metrics.prometheus.*`: empty strings mean "not set". */
export interface ScrapeCredentialConfig {
  bearer_token: string;
  username: string;
  password: string;
}

/**
 * The optional credential a scraper must present on `GET /metrics` (docs/metrics.md#prometheus-get-metrics): a bearer token,
 * basic auth, or either of them when both are configured. Without any, the endpoint is open.
 * Comparisons are constant-time (over SHA-256 digests, so lengths do not leak either).
 */
export class ScrapeCredential {
  private readonly bearerDigest: Buffer | undefined;
  private readonly basicDigest: Buffer | undefined;

  constructor(config: ScrapeCredentialConfig) {
    this.bearerDigest = config.bearer_token === '' ? undefined : digest(config.bearer_token);
    // Basic auth is on when a username or a password is configured; both are compared.
    this.basicDigest =
      config.username === '' && config.password === ''
        ? undefined
        : digest(`${config.username}:${config.password}`);
  }

  /** Is any credential configured? */
  get required(): boolean {
    return this.bearerDigest !== undefined || this.basicDigest !== undefined;
  }

  /** Does this `Authorization` header carry a configured credential (or is none required)? */
  accepts(authorization: string | undefined): boolean {
    if (!this.required) return true;
    if (authorization === undefined) return false;
    const space = authorization.indexOf(' ');
    if (space < 0) return false;
    const scheme = authorization.slice(0, space).toLowerCase();
    const value = authorization.slice(space + 1).trim();
    if (scheme === 'bearer' && this.bearerDigest !== undefined)
      return sameDigest(digest(value), this.bearerDigest);
    if (scheme === 'basic' && this.basicDigest !== undefined) {
      return sameDigest(digest(Buffer.from(value, 'base64').toString('utf8')), this.basicDigest);
    }
    return false;
  }

  /** The `WWW-Authenticate` challenges for a 401, one per configured scheme. */
  challenge(): string {
    const challenges: string[] = [];
    if (this.bearerDigest !== undefined) challenges.push('Bearer realm="metrics"');
    if (this.basicDigest !== undefined) challenges.push('Basic realm="metrics", charset="UTF-8"');
    return challenges.join(', ');
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function sameDigest(a: Buffer, b: Buffer): boolean {
  return timingSafeEqual(a, b);
}
