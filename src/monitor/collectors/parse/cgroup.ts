/**
 * Parsers of cgroup files: v2 (Documentation/admin-guide/cgroup-v2.rst) and the v1 files that hold
 * the same facts (Documentation/admin-guide/cgroup-v1/). Each takes the file's text.
 */

/** The unified-hierarchy path of /proc/self/cgroup (the `0::<path>` line); `undefined` without cgroup v2. */
export function parseCgroupPath(text: string): string | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('0::')) return line.slice(3).trim() || '/';
  }
  return undefined;
}

/** `cpu.max` = `$MAX $PERIOD`: the CPU limit in CPUs (quota / period), `undefined` when `max` (unlimited). */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === 'max') return undefined;
  const quotaUsec = Number(quota);
  const periodUsec = Number(period ?? 100_000);
  if (!(quotaUsec > 0) || !(periodUsec > 0)) throw new Error(`cpu.max: cannot read "${text.trim()}"`);
  return quotaUsec / periodUsec;
}

/** CPU time used by the cgroup since it was created, µs (`cpu.stat`). */
export interface CgroupCpuUsage {
  usageUsec: number;
  userUsec: number;
  systemUsec: number;
}

export function parseCpuStat(text: string): CgroupCpuUsage {
  const fields = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key !== undefined && value !== undefined) fields.set(key, Number(value));
  }
  const usageUsec = fields.get('usage_usec');
  if (usageUsec === undefined) throw new Error('cpu.stat: no usage_usec line');
  return { usageUsec, userUsec: fields.get('user_usec') ?? 0, systemUsec: fields.get('system_usec') ?? 0 };
}

/**
 * `memory.max`, bytes; `undefined` when `max` (unlimited). Also reads v1 `memory.limit_in_bytes`
 * (`file` names it in errors), which writes "unlimited" as a number instead.
 */
export function parseMemoryMax(text: string, file = 'memory.max'): number | undefined {
  const value = text.trim();
  if (value === 'max') return undefined;
  return parseBytes(value, file);
}

/** `memory.current`, bytes; also v1 `memory.usage_in_bytes` (`file` names it in errors). */
export function parseMemoryCurrent(text: string, file = 'memory.current'): number {
  return parseBytes(text.trim(), file);
}

function parseBytes(value: string, file: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`${file}: cannot read "${value}"`);
  return Number(value);
}

/** A cgroup v1 hierarchy the process belongs to: its controllers and the process's path in it. */
export interface CgroupV1Membership {
  /** As listed, e.g. `['cpu', 'cpuacct']`; the hierarchy is mounted under their joined names. */
  controllers: string[];
  path: string;
}

/**
 * The v1 hierarchy that holds `controller`, from `/proc/self/cgroup` lines
 * `<id>:<controllers>:<path>` (e.g. `4:cpu,cpuacct:/docker/abc`); `undefined` without one, as on a
 * v2-only host, whose single line is `0::<path>`.
 */
export function parseCgroupV1Membership(text: string, controller: string): CgroupV1Membership | undefined {
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first === -1 || second === -1) continue;
    const controllers = line.slice(first + 1, second).split(',');
    if (controllers.includes(controller)) {
      return { controllers, path: line.slice(second + 1).trim() || '/' };
    }
  }
  return undefined;
}

/**
 * cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`: the CPU limit in CPUs, `undefined` when the
 * quota is -1 (unlimited).
 */
export function parseCfsQuota(quotaText: string, periodText: string): number | undefined {
  const quotaUsec = Number(quotaText.trim());
  const periodUsec = Number(periodText.trim());
  if (quotaUsec === -1) return undefined;
  if (!(quotaUsec > 0) || !(periodUsec > 0)) {
    throw new Error(
      `cpu.cfs_quota_us / cpu.cfs_period_us: cannot read "${quotaText.trim()} / ${periodText.trim()}"`,
    );
  }
  return quotaUsec / periodUsec;
}

/** USER_HZ: the unit of `cpuacct.stat`, 100 on every Linux architecture streamcore runs on. */
const CLOCK_TICKS_PER_SEC = 100;

/**
 * cgroup v1 CPU time: `cpuacct.usage` (nanoseconds) and `cpuacct.stat` (`user` and `system` in
 * clock ticks), as µs like v2's `cpu.stat`.
 */
export function parseCpuacct(usageText: string, statText: string): CgroupCpuUsage {
  const usageNs = parseBytes(usageText.trim(), 'cpuacct.usage');
  const ticks = new Map<string, number>();
  for (const line of statText.split('\n')) {
    const [key, value] = line.trim().split(/\s+/);
    if (key !== undefined && value !== undefined) ticks.set(key, Number(value));
  }
  const usecPerTick = 1_000_000 / CLOCK_TICKS_PER_SEC;
  return {
    usageUsec: usageNs / 1000,
    userUsec: (ticks.get('user') ?? 0) * usecPerTick,
    systemUsec: (ticks.get('system') ?? 0) * usecPerTick,
  };
}
