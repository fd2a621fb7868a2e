import type { Schedule } from '../../src/process/index.js';

interface Pending {
  readonly atMs: number;
  readonly fire: () => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A wall clock the test moves forward, with the timers the server schedules on it (`schedule`,
 * AppDeps). Time passes as it does for real, so the server runs as usual between the steps;
 * `advance` moves the clock on and fires at once every timer that has come due, so a test of a
 * 5-second timer does not wait 5 seconds. A timer also fires when its time comes for real.
 */
export class TestClock {
  private offsetMs = 0;
  private readonly pending = new Set<Pending>();

  readonly now = (): number => Date.now() + this.offsetMs;

  readonly schedule: Schedule = (fire, delayMs) => {
    const entry: Pending = {
      atMs: this.now() + delayMs,
      fire,
      timer: setTimeout(() => this.fire(entry), delayMs),
    };
    entry.timer.unref();
    this.pending.add(entry);
    return () => {
      clearTimeout(entry.timer);
      this.pending.delete(entry);
    };
  };

  /** Moves the clock `ms` on and fires the timers due by then, earliest first (those they schedule too). */
  advance(ms: number): void {
    this.offsetMs += ms;
    for (;;) {
      const now = this.now();
      const due = [...this.pending].filter((entry) => entry.atMs <= now).sort((a, b) => a.atMs - b.atMs)[0];
      if (due === undefined) return;
      this.fire(due);
    }
  }

  private fire(entry: Pending): void {
    if (!this.pending.delete(entry)) return;
    clearTimeout(entry.timer);
    entry.fire();
  }
}
