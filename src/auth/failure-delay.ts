/**
 * The short wait before a failed login is answered (docs/auth.md#login-methods). Each wait is a timer, so other
 * requests are served meanwhile; `endAll` (at shutdown) ends every pending wait at once, so a
 * graceful stop does not sit out the delays.
 */
export class FailureDelay {
  private readonly pending = new Set<() => void>();
  private ended = false;

  /** @param delayMs length of each wait, milliseconds (`api.auth.throttle.delay_ms`). */
  constructor(private readonly delayMs: number) {}

  wait(): Promise<void> {
    if (this.delayMs <= 0 || this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.pending.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, this.delayMs);
      this.pending.add(finish);
    });
  }

  endAll(): void {
    this.ended = true;
    for (const finish of [...this.pending]) finish();
  }
}
