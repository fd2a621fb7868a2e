import type { ProcessUsageSample } from './proc-usage.js';
import { ResourceWatch, type ResourceLimits } from './resource-watch.js';

/**
 * Reads one run's CPU and memory from `/proc` once per tick (synchronously: proc-usage.ts says
 * why) and checks the limits on every sample.
 */
export class UsageSampler {
  private watch: ResourceWatch;

  constructor(
    private readonly limits: ResourceLimits,
    private readonly cpus: number,
    private readonly readUsage: (pid: number) => ProcessUsageSample | undefined,
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

  /** Samples `pid`; returns why the child must be stopped, or `undefined`. */
  sample(pid: number, nowMs: number): string | undefined {
    const sample = this.readUsage(pid);
    return sample === undefined ? undefined : this.watch.update(sample, nowMs);
  }
}
