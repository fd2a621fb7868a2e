import type { Schedule } from './schedule.js';

/** Shortest wait before a reconnect, also when the configured delay is 0 (no busy loop). */
export const MIN_RECONNECT_MS = 1000;

/** The pending reconnect of a process: at most one, cancelled by any new order. */
export class ReconnectTimer {
  private cancelPending: (() => void) | undefined;
  private atMs: number | undefined;

  constructor(private readonly timers: Schedule) {}

  /** True while a reconnect is pending. */
  get pending(): boolean {
    return this.cancelPending !== undefined;
  }

  /** Calls `fire` after `delayMs` (at least `MIN_RECONNECT_MS`), replacing a pending one. */
  schedule(nowMs: number, delayMs: number, fire: () => void): void {
    this.cancel();
    const delay = Math.max(delayMs, MIN_RECONNECT_MS);
    this.atMs = nowMs + delay;
    this.cancelPending = this.timers(() => {
      this.cancelPending = undefined;
      this.atMs = undefined;
      fire();
    }, delay);
  }

  cancel(): void {
    this.cancelPending?.();
    this.cancelPending = undefined;
    this.atMs = undefined;
  }

  /** Seconds until the pending reconnect, or -1 when none is pending. */
  secondsLeft(nowMs: number): number {
    if (this.atMs === undefined) return -1;
    return Math.max(0, Math.ceil((this.atMs - nowMs) / 1000));
  }
}
