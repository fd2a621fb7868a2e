/**
 * Parsers of cgroup v2 files (Documentation/admin-guide/cgroup-v2.rst). Each takes the file's text.
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

/** `memory.max`, bytes; `undefined` when `max` (unlimited). */
export function parseMemoryMax(text: string): number | undefined {
  const value = text.trim();
  if (value === 'max') return undefined;
  return parseBytes(value, 'memory.max');
}

/** `memory.current`, bytes. */
export function parseMemoryCurrent(text: string): number {
  return parseBytes(text.trim(), 'memory.current');
}

function parseBytes(value: string, file: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`${file}: cannot read "${value}"`);
  return Number(value);
}
