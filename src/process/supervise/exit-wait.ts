import type { Schedule } from './schedule.js';

/** How long a stopped child gets between SIGINT and SIGKILL (docs/processes.md#states-orders-and-supervision). */
export const KILL_AFTER_MS = 5000;
/** How long to wait for the exit after SIGKILL before giving up on the child. */
const EXIT_AFTER_KILL_MS = 3000;

/**
 * The wait for one child's exit: what `stop()` and `dispose()` resolve on, and the escalation
 * of a stop from SIGINT to SIGKILL.
 */
export class ExitWait {
  private exited: Promise<void> = Promise.resolve();
  private resolveExited: () => void = () => undefined;
  private cancelKill: (() => void) | undefined;

  constructor(private readonly schedule: Schedule) {}

  /** Resolves once the current child has exited (or been given up on after SIGKILL). */
  get done(): Promise<void> {
    return this.exited;
  }

  /** A new child is starting. */
  begin(): void {
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
  }

  /**
   * SIGINT was sent: after `KILL_AFTER_MS` without an exit, `kill()` (SIGKILL); a child stuck in
   * the kernel may never report its exit, so the wait ends `EXIT_AFTER_KILL_MS` later anyway.
   */
  escalate(kill: () => void): void {
    this.cancelKill = this.schedule(() => {
      kill();
      this.cancelKill = this.schedule(() => this.resolveExited(), EXIT_AFTER_KILL_MS);
    }, KILL_AFTER_MS);
  }

  /** The child is gone (or never came). */
  end(): void {
    this.cancelKill?.();
    this.cancelKill = undefined;
    this.resolveExited();
  }
}
