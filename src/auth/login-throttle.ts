import { createHash } from 'node:crypto';
import { throttleKeyOfAddress } from '../http/index.js';
import { FailureWindows } from './failure-windows.js';

export interface LoginThrottleOptions {
  /** Failures within the window after which attempts get 429 (`api.auth.throttle.max_failures`). */
  maxFailures: number;
  /** Length of the sliding window, seconds (`api.auth.throttle.window_sec`). */
  windowSec: number;
  /** Wall clock, milliseconds. */
  now: () => number;
  /** Bound on the addresses and on the usernames tracked (each). */
  maxKeys?: number;
  /** Called after every recorded failure or success (the API workers learn `failingKeys` from it). */
  changed?: () => void;
}

/** Usernames longer than this (characters) are tracked by their hash, so keys stay small. */
const MAX_USERNAME_KEY_LENGTH = 128;

/**
 * Brute-force protection of a password check (docs/auth.md#login-methods: `POST /api/login`; also memfs basic auth):
 * failures are counted per client address and per username in sliding windows.
 *
 * - An address with `maxFailures` failures younger than the window is refused (429) until the
 *   oldest of them leaves it, whatever it tries.
 * - A username with `maxFailures` failures (from any addresses) is refused only to addresses that
 *   have failures of their own in the window. An address with a clean record still gets its
 *   attempt: the owner is never locked out by someone else's guessing, while an attacker who rotates
 *   addresses gets one guess per address and window instead of `maxFailures`.
 *
 * A success clears the address's count and the username's.
 */
export class LoginThrottle {
  private readonly byAddress: FailureWindows;
  private readonly byUsername: FailureWindows;

  constructor(private readonly options: LoginThrottleOptions) {
    const windowMs = options.windowSec * 1000;
    const maxKeys = options.maxKeys ?? 10_000;
    this.byAddress = new FailureWindows(options.maxFailures, windowMs, maxKeys);
    this.byUsername = new FailureWindows(options.maxFailures, windowMs, maxKeys);
  }

  /** Seconds until an attempt from `address` (for `username`, if known) is allowed; 0 when it is now. */
  retryAfterSec(address: string, username?: string): number {
    const now = this.options.now();
    const addressKey = throttleKeyOfAddress(address);
    let waitMs = this.byAddress.lockedForMs(addressKey, now);
    if (waitMs === 0 && username !== undefined) {
      // Refused while both hold: the username is locked and this address has failed recently.
      waitMs = Math.min(
        this.byUsername.lockedForMs(usernameKey(username), now),
        this.byAddress.recordedForMs(addressKey, now),
      );
    }
    return Math.ceil(waitMs / 1000);
  }

  recordFailure(address: string, username?: string): void {
    const now = this.options.now();
    this.byAddress.record(throttleKeyOfAddress(address), now);
    if (username !== undefined) this.byUsername.record(usernameKey(username), now);
    this.options.changed?.();
  }

  recordSuccess(address: string, username?: string): void {
    this.byAddress.clear(throttleKeyOfAddress(address));
    if (username !== undefined) this.byUsername.clear(usernameKey(username));
    this.options.changed?.();
  }

  /**
   * The address and username keys (`loginThrottleKeys`) with a failure in their window now. An
   * attempt whose keys are in neither list is neither refused nor changes anything when it
   * succeeds: an API worker answers such a login itself, the others are this process's.
   */
  failingKeys(): { addresses: string[]; usernames: string[] } {
    const now = this.options.now();
    return { addresses: this.byAddress.keysRecorded(now), usernames: this.byUsername.keysRecorded(now) };
  }
}

/** The keys an attempt from `address` for `username` is counted under (see `failingKeys`). */
export function loginThrottleKeys(address: string, username: string): { address: string; username: string } {
  return { address: throttleKeyOfAddress(address), username: usernameKey(username) };
}

function usernameKey(username: string): string {
  return username.length <= MAX_USERNAME_KEY_LENGTH
    ? username
    : `sha256:${createHash('sha256').update(username).digest('hex')}`;
}
