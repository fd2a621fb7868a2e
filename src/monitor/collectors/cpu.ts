import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Collector } from './collector.js';
import type { CgroupReader } from './cgroup-reader.js';
import {
  cpuPercentages,
  parseProcStat,
  type CgroupCpuUsage,
  type CpuPercentages,
  type CpuTimes,
} from './parse/index.js';

export interface CpuCollectorDeps {
  procRoot: string;
  cgroup: CgroupReader;
  /** Monotonic clock, ms (for cgroup usage rates). */
  monotonicNow: () => number;
  /**
   * With no earlier reading (the first collection), wait this long between two readings so the
   * first snapshot already shows current use, ms.
   */
  firstSampleDelayMs: number;
}

interface Reading {
  times: CpuTimes;
  cpuCount: number;
  /** Set inside a cgroup with a CPU limit. */
  cgroup: { cpus: number; dir: string; usage: CgroupCpuUsage; atMs: number } | undefined;
}

/**
 * `cpu_user`, `cpu_system`, `cpu_idle`, `cpu_other` (percent over the last interval) and
 * `cpu_ncpu` (docs/metrics.md#what-each-value-means). On the host they come from /proc/stat deltas; inside a cgroup (v2 or v1)
 * with a CPU limit, `cpu_ncpu` is the limit and the percentages are the cgroup's use relative to it.
 */
export function createCpuCollector(deps: CpuCollectorDeps): Collector {
  let previous: Reading | undefined;
  return {
    name: 'cpu',
    async collect(emit) {
      let before = previous;
      if (before === undefined) {
        before = await read(deps);
        await new Promise((resolve) => setTimeout(resolve, deps.firstSampleDelayMs));
      }
      const now = await read(deps);
      previous = now;
      const percent = percentagesBetween(before, now);
      emit('cpu_ncpu', [], now.cgroup?.cpus ?? now.cpuCount);
      emit('cpu_user', [], percent.user);
      emit('cpu_system', [], percent.system);
      emit('cpu_idle', [], percent.idle);
      emit('cpu_other', [], percent.other);
    },
  };
}

async function read(deps: CpuCollectorDeps): Promise<Reading> {
  const stat = parseProcStat(await readFile(join(deps.procRoot, 'stat'), 'utf8'));
  const limit = await deps.cgroup.cpuLimit();
  const usage = limit === undefined ? undefined : await deps.cgroup.cpuUsage(limit);
  return {
    times: stat.total,
    cpuCount: stat.cpuCount,
    cgroup:
      limit === undefined || usage === undefined ? undefined : { ...limit, usage, atMs: deps.monotonicNow() },
  };
}

function percentagesBetween(before: Reading, after: Reading): CpuPercentages {
  const limited = after.cgroup;
  const earlier = before.cgroup;
  if (limited === undefined) return cpuPercentages(after.times, before.times);
  if (earlier === undefined || earlier.dir !== limited.dir) return cpuPercentages(after.times, before.times);
  return cgroupPercentages(earlier.usage, limited.usage, (limited.atMs - earlier.atMs) * 1000 * limited.cpus);
}

/**
 * Use of a CPU-limited cgroup relative to its limit: `capacityUsec` = wall time × limit. The
 * kernel enforces the quota per period, so a sample can briefly exceed it; then the busy parts
 * are scaled to 100 % so that the four values still add up to 100.
 */
export function cgroupPercentages(
  before: CgroupCpuUsage,
  after: CgroupCpuUsage,
  capacityUsec: number,
): CpuPercentages {
  if (!(capacityUsec > 0)) return { user: 0, system: 0, idle: 100, other: 0 };
  const usage = Math.max(0, after.usageUsec - before.usageUsec);
  const user = Math.max(0, after.userUsec - before.userUsec);
  const system = Math.max(0, after.systemUsec - before.systemUsec);
  const other = Math.max(0, usage - user - system);
  const busy = user + system + other;
  const scale = busy > capacityUsec ? capacityUsec / busy : 1;
  const percent = (value: number): number => ((value * scale) / capacityUsec) * 100;
  const result = { user: percent(user), system: percent(system), other: percent(other) };
  return { ...result, idle: Math.max(0, 100 - result.user - result.system - result.other) };
}
