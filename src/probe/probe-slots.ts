import { ApiError } from '../http/index.js';

/**
 * Bounds concurrent probes: at most `running` at once, at most `queued` waiting; past that a probe
 * is refused with a 503 at once rather than piling up encoders on the host.
 */
export class ProbeSlots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly running: number,
    private readonly queued: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.running) {
      if (this.waiting.length >= this.queued) {
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          `${this.running} probes are running and ${this.queued} are waiting; try again later`,
          { message: 'Too many probes', headers: { 'retry-after': '5' } },
        );
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active += 1;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next waiter, or give it back.
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.active -= 1;
    }
  }
}
