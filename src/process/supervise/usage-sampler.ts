import type { ProcessUsageSample } from './proc-usage.js';
import { ResourceWatch, type ResourceLimits } from './resource-watch.js';

/**
 * Reads one run's CPU and memory from `/proc` once per tick, one read at a time (a slow read is
 * not stacked up), and checks the limits on every sample.
 */
export class UsageSampler {
  private watch: ResourceWatch;
  private sampling = false;

  constructor(
    private readonly limits: ResourceLimits,
    private readonly cpus: number,
    private readonly readUsage: (pid: number) => Promise<ProcessUsageSample | undefined>,
  ) {
    this.watch = new ResourceWatch(limits, cpus);
  }

  /** CPU (percent of the machine) and resident memory (bytes) of the latest sample. */
  get usage(): { cpuPercent: number; rssBytes: number } {
    return this.watch.usage;
  }

  /** A new run: usage and the time over a limit start from nothing. */
  reset(): void {
    this.watch = new ResourceWatch(this.limits, this.cpus);
  }

  /**
   * Samples `pid` unless a read is under way. `stillCurrent` is asked once the read is back (the
   * run may have ended meanwhile); returns why the child must be stopped, or `undefined`.
   */
  async sample(pid: number, nowMs: number, stillCurrent: () => boolean): Promise<string | undefined> {
    if (this.sampling) return undefined;
    this.sampling = true;
    try {
      const sample = await this.readUsage(pid);
      if (sample === undefined || !stillCurrent()) return undefined;
      return this.watch.update(sample, nowMs);
    } finally {
      this.sampling = false;
    }
  }
}
