import type { Collector } from './collector.js';
import { CgroupReader } from './cgroup-reader.js';
import { createCpuCollector } from './cpu.js';
import { createDiskCollector } from './disk.js';
import { createMemoryCollector } from './memory.js';
import { createNetworkCollector } from './network.js';
import { createUptimeCollector } from './uptime.js';

export interface HostCollectorDeps {
  /** Root of the proc filesystem, usually `/proc`. */
  procRoot: string;
  /** Where cgroup hierarchies are mounted (v2 root, v1 controllers below), usually `/sys/fs/cgroup`. */
  cgroupRoot: string;
  /** `storage.disk.dir`. */
  diskDir: string;
  /** Wall clock, ms. */
  now: () => number;
  /** When the server started, ms on `now`'s clock. */
  startedAtMs: number;
  /** Monotonic clock, ms; default `performance.now`. */
  monotonicNow?: () => number;
  /** See `CpuCollectorDeps.firstSampleDelayMs`; default 250 ms. */
  firstCpuSampleDelayMs?: number;
}

/** The collectors of the host this module owns: cpu, memory, disk, network, uptime. */
export function createHostCollectors(deps: HostCollectorDeps): Collector[] {
  const cgroup = new CgroupReader(deps.procRoot, deps.cgroupRoot);
  return [
    createCpuCollector({
      procRoot: deps.procRoot,
      cgroup,
      monotonicNow: deps.monotonicNow ?? (() => performance.now()),
      firstSampleDelayMs: deps.firstCpuSampleDelayMs ?? 250,
    }),
    createMemoryCollector({ procRoot: deps.procRoot, cgroup }),
    createDiskCollector({ dir: deps.diskDir }),
    createNetworkCollector({ procRoot: deps.procRoot }),
    createUptimeCollector({ now: deps.now, startedAtMs: deps.startedAtMs }),
  ];
}

export { CgroupReader } from './cgroup-reader.js';
export { createCpuCollector, cgroupPercentages } from './cpu.js';
export { createMemoryCollector } from './memory.js';
export { createDiskCollector } from './disk.js';
export { createNetworkCollector } from './network.js';
export { createUptimeCollector } from './uptime.js';
