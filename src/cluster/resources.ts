import { cpus, freemem, totalmem } from 'node:os';
import type { NodeResources } from './keys.js';

/** The CPU and memory of this machine, for placement; CPU use is measured between two calls. */
export class MachineLoad {
  private previous = cpuTimes();

  /** `encoders`: running now; `maxProcesses`: this node's `ffmpeg.max_processes`. */
  sample(encoders: number, maxProcesses: number): NodeResources {
    const current = cpuTimes();
    const total = current.total - this.previous.total;
    const idle = current.idle - this.previous.idle;
    this.previous = current;
    return {
      ncpu: cpus().length,
      cpuUsage: total > 0 ? Math.round((1000 * (total - idle)) / total) / 10 : 0,
      memTotalBytes: totalmem(),
      memUsedBytes: totalmem() - freemem(),
      encoders,
      maxProcesses,
    };
  }
}

function cpuTimes(): { total: number; idle: number } {
  let total = 0;
  let idle = 0;
  for (const cpu of cpus()) {
    const { user, nice, sys, irq } = cpu.times;
    total += user + nice + sys + irq + cpu.times.idle;
    idle += cpu.times.idle;
  }
  return { total, idle };
}
