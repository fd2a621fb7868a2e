/**
 * Per key, the times (milliseconds, oldest first) of at most `maxFailures` recent failures, within
 * a sliding window. A key holding `maxFailures` of them is locked.
 *
 * The table is bounded at `maxKeys`, and when it is full the entries that matter stay: a locked key
 * is evicted only when no unlocked one is left (after expired ones are swept), so a flood of
 * failures for other keys cannot free the key under attack. Among equals the stalest goes first.
 */
export class FailureWindows {
  /** Keys below the lock threshold, in order of their last failure (stalest first). */
  private readonly counting = new Map<string, number[]>();
  /** Locked keys, in order of their locking (oldest first). */
  private readonly locked = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  /** Milliseconds until `key` is no longer locked; 0 when it is not. */
  lockedForMs(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times === undefined || times.length < this.maxFailures) return 0;
    return (times[0] ?? now) + this.windowMs - now;
  }

  /** Milliseconds until the last failure of `key` leaves the window; 0 when it has none. */
  recordedForMs(key: string, now: number): number {
    const times = this.recent(key, now);
    const last = times?.[times.length - 1];
    return last === undefined ? 0 : last + this.windowMs - now;
  }

  /** The keys with a failure inside the window at `now`. */
  keysRecorded(now: number): string[] {
    return [...this.counting.keys(), ...this.locked.keys()].filter(
      (key) => this.recent(key, now) !== undefined,
    );
  }

  record(key: string, now: number): void {
    const times = this.recent(key, now) ?? [];
    times.push(now);
    if (times.length > this.maxFailures) times.splice(0, times.length - this.maxFailures);
    this.counting.delete(key);
    if (times.length >= this.maxFailures) {
      // Re-locking keeps its place: a key hammered for long is not moved ahead of newer locks.
      this.locked.set(key, times);
    } else {
      this.counting.set(key, times);
    }
    this.evictOverflow(key, now);
  }

  clear(key: string): void {
    this.counting.delete(key);
    this.locked.delete(key);
  }

  /** How many keys are tracked (for tests and metrics). */
  get size(): number {
    return this.counting.size + this.locked.size;
  }

  /**
   * Makes room, never at the cost of `recorded` (the key that just failed): were it dropped, a
   * table full of locks would let every new address guess unchecked.
   */
  private evictOverflow(recorded: string, now: number): void {
    if (this.size <= this.maxKeys) return;
    const stalest = firstOtherThan(this.counting, recorded);
    if (stalest !== undefined) {
      this.counting.delete(stalest);
      return;
    }
    // Only locked keys left: drop the expired ones first, then the oldest lock.
    const cutoff = now - this.windowMs;
    for (const [key, times] of this.locked) {
      if ((times[times.length - 1] ?? now) <= cutoff) this.locked.delete(key);
    }
    if (this.size <= this.maxKeys) return;
    const oldest = firstOtherThan(this.locked, recorded);
    if (oldest !== undefined) this.locked.delete(oldest);
  }

  /** The failures of `key` still inside the window at `now`; drops the key when none are. */
  private recent(key: string, now: number): number[] | undefined {
    const times = this.locked.get(key) ?? this.counting.get(key);
    if (times === undefined) return undefined;
    const cutoff = now - this.windowMs;
    let expired = 0;
    while (expired < times.length && (times[expired] ?? now) <= cutoff) expired += 1;
    if (expired === times.length) {
      this.clear(key);
      return undefined;
    }
    if (expired > 0) {
      times.splice(0, expired);
      // Fewer than the threshold now: back to counting, as the newest there.
      if (times.length < this.maxFailures && this.locked.delete(key)) this.counting.set(key, times);
    }
    return times;
  }
}

/** The first key of `map` in insertion order that is not `skipped`. */
function firstOtherThan(map: Map<string, unknown>, skipped: string): string | undefined {
  for (const key of map.keys()) if (key !== skipped) return key;
  return undefined;
}
