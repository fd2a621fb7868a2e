import { AccessCache } from './access-cache.js';
import { bearerToken } from './bearer.js';
import type { OwnTokens } from './own-tokens.js';

/**
 * Decides whether an `Authorization` header carries a valid access token of ours (docs/auth.md#the-guard-on-apiv3).
 * Verified headers are cached until their token's `exp`, so the guard's common case is
 * synchronous: `isCachedValid` first, `verify` only on a miss.
 */
export class AccessVerifier {
  private readonly cache: AccessCache;
  /** Bumped by `forgetAll`, so a verification that began under the old key caches nothing. */
  private epoch = 0;

  constructor(
    private readonly tokens: OwnTokens,
    private readonly now: () => number,
    cacheEntries?: number,
  ) {
    this.cache = new AccessCache(cacheEntries);
  }

  /** True when `header` was verified before and its token is still valid. Never false-positive. */
  isCachedValid(header: string | undefined): boolean {
    return header !== undefined && this.cache.has(header, this.now());
  }

  /** Full verification; caches the header on success. Never throws. */
  async verify(header: string | undefined): Promise<boolean> {
    const token = bearerToken(header);
    if (token === undefined || header === undefined) return false;
    const epoch = this.epoch;
    const verified = await this.tokens.verify(token, 'access');
    if (verified === undefined || epoch !== this.epoch) return false;
    this.cache.add(header, verified.expiresAtSec * 1000);
    return true;
  }

  /** Forgets every verified header (the tokens' key changed). */
  forgetAll(): void {
    this.epoch += 1;
    this.cache.clear();
  }

  /** `isCachedValid`, else `verify`. */
  async isValid(header: string | undefined): Promise<boolean> {
    return this.isCachedValid(header) || this.verify(header);
  }
}
