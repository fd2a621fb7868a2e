import { createHash } from 'node:crypto';
import { throttleKeyOfAddress } from '../http/index.js';

export interface LoginThrottleOptions {
  /** Failures within the window after which attempts get 429 (`api.auth.throttle.max_failures`). */
  maxFailures: number;
  /** Length of the sliding window, seconds (`api.auth.throttle.window_sec`). */
  windowSec: number;
  /** Wall clock, milliseconds. */
  now: () => number;
  /** Bound on the addresses and on the usernames tracked (each), oldest-failing evicted first. */
  maxKeys?: number;
}

/** Usernames longer than this (characters) are tracked by their hash, so keys stay small. */
const MAX_USERNAME_KEY_LENGTH = 128;

/**
 * Brute-force protection of `POST /api/login` (SPEC §3.2): failures are counted per client address
 * and per username in sliding windows. Once either holds `maxFailures` failures younger than the
 * window, attempts are refused until the oldest of them leaves it. A success clears both counts.
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
    const waitMs = Math.max(
      this.byAddress.waitMs(throttleKeyOfAddress(address), now),
      username === undefined ? 0 : this.byUsername.waitMs(usernameKey(username), now),
    );
    return Math.ceil(waitMs / 1000);
  }

  recordFailure(address: string, username?: string): void {
    const now = this.options.now();
    this.byAddress.record(throttleKeyOfAddress(address), now);
    if (username !== undefined) this.byUsername.record(usernameKey(username), now);
  }

  recordSuccess(address: string, username?: string): void {
    this.byAddress.clear(throttleKeyOfAddress(address));
    if (username !== undefined) this.byUsername.clear(usernameKey(username));
  }
}

function usernameKey(username: string): string {
  return username.length <= MAX_USERNAME_KEY_LENGTH
    ? username
    : `sha256:${createHash('sha256').update(username).digest('hex')}`;
}

/**
 * Per key, the times (milliseconds, oldest first) of at most `maxFailures` recent failures. Keys
 * are kept in order of their last failure, so eviction at `maxKeys` drops the stalest first.
 */
class FailureWindows {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  waitMs(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times === undefined || times.length < this.maxFailures) return 0;
    return (times[0] ?? now) + this.windowMs - now;
  }

  record(key: string, now: number): void {
    const times = this.recent(key, now) ?? [];
    times.push(now);
    if (times.length > this.maxFailures) times.splice(0, times.length - this.maxFailures);
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > this.maxKeys) {
      const stalest = this.failures.keys().next();
      if (stalest.done !== true) this.failures.delete(stalest.value);
    }
  }

  clear(key: string): void {
    this.failures.delete(key);
  }

  /** The failures of `key` still inside the window at `now`; drops the key when none are. */
  private recent(key: string, now: number): number[] | undefined {
    const times = this.failures.get(key);
    if (times === undefined) return undefined;
    const cutoff = now - this.windowMs;
    let expired = 0;
    while (expired < times.length && (times[expired] ?? now) <= cutoff) expired += 1;
    if (expired === times.length) {
      this.failures.delete(key);
      return undefined;
    }
    if (expired > 0) times.splice(0, expired);
    return times;
  }
}
