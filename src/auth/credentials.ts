import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Checks a username and password against the configured ones in constant time (docs/auth.md#login-methods). Both
 * sides are hashed to equal-length digests first, so neither the content nor the length of the
 * configured values leaks through timing, and both fields are always compared.
 */
export class PasswordCheck {
  private username: Buffer;
  private password: Buffer;

  constructor(username: string, password: string) {
    this.username = digest(username);
    this.password = digest(password);
  }

  /** Checks against new credentials from now on (a configuration reload). */
  replace(username: string, password: string): void {
    this.username = digest(username);
    this.password = digest(password);
  }

  matches(username: string, password: string): boolean {
    const usernameOk = timingSafeEqual(digest(username), this.username);
    const passwordOk = timingSafeEqual(digest(password), this.password);
    return usernameOk && passwordOk;
  }
}

/** One-shot: no Hash object for the garbage collector to finalise per login. */
function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}
