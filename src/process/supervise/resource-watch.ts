import { CpuMeter, type ProcessUsageSample } from './proc-usage.js';

/** CPU and memory limits of a process; 0 = no limit. */
export interface ResourceLimits {
  /** Percent of the whole machine. */
  cpuPercent: number;
  memoryBytes: number;
  /** How long a limit may be exceeded before the process is stopped, milliseconds. */
  waitforMs: number;
}

/**
 * Follows one child's CPU and memory (docs/processes.md#states-orders-and-supervision): fed a `/proc` sample every second, it
 * keeps the current usage and says when a limit has been exceeded for `waitforMs`.
 */
export class ResourceWatch {
  private readonly meter: CpuMeter;
  private overCpuSinceMs: number | undefined;
  private overMemorySinceMs: number | undefined;
  /** Latest CPU (percent of the machine) and resident memory (bytes). */
  readonly usage = { cpuPercent: 0, rssBytes: 0 };

  constructor(
    private readonly limits: ResourceLimits,
    cpus: number,
  ) {
    this.meter = new CpuMeter(cpus);
  }

  /** Takes a sample; returns why the child must be stopped, or `undefined`. */
  update(sample: ProcessUsageSample, nowMs: number): string | undefined {
    const cpu = this.meter.update(sample.cpuTicks, nowMs);
    if (cpu !== undefined) this.usage.cpuPercent = cpu;
    this.usage.rssBytes = sample.rssBytes;
    const { cpuPercent, memoryBytes, waitforMs } = this.limits;
    if (cpuPercent > 0 && cpu !== undefined) {
      this.overCpuSinceMs = cpu > cpuPercent ? (this.overCpuSinceMs ?? nowMs) : undefined;
    }
    if (memoryBytes > 0) {
      this.overMemorySinceMs = sample.rssBytes > memoryBytes ? (this.overMemorySinceMs ?? nowMs) : undefined;
    }
    const seconds = waitforMs / 1000;
    if (this.overCpuSinceMs !== undefined && nowMs - this.overCpuSinceMs >= waitforMs) {
      return `CPU usage ${this.usage.cpuPercent.toFixed(1)}% above the limit of ${cpuPercent}% for ${seconds} s`;
    }
    if (this.overMemorySinceMs !== undefined && nowMs - this.overMemorySinceMs >= waitforMs) {
      return `memory ${sample.rssBytes} bytes above the limit of ${memoryBytes} bytes for ${seconds} s`;
    }
    return undefined;
  }
}
