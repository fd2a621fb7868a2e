/** Kernel CPU time counters of the `cpu` line of /proc/stat, in clock ticks (USER_HZ). */
export interface CpuTimes {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
  /** Already included in `user` by the kernel. */
  guest: number;
  /** Already included in `nice` by the kernel. */
  guestNice: number;
}

export interface ProcStat {
  /** The aggregate `cpu` line. */
  total: CpuTimes;
  /** Number of `cpuN` lines: logical CPUs online. */
  cpuCount: number;
}

/**
 * Parses /proc/stat (proc(5)). Missing trailing columns (older kernels) count as 0.
 * Throws when there is no aggregate `cpu` line.
 */
export function parseProcStat(text: string): ProcStat {
  let total: CpuTimes | undefined;
  let cpuCount = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('cpu')) continue;
    const fields = line.trim().split(/\s+/);
    if (fields[0] === 'cpu') total = cpuTimes(fields.slice(1).map(Number));
    else if (/^cpu\d+$/.test(fields[0] ?? '')) cpuCount++;
  }
  if (total === undefined) throw new Error('/proc/stat: no aggregate "cpu" line');
  return { total, cpuCount };
}

function cpuTimes(values: number[]): CpuTimes {
  const at = (index: number): number => {
    const value = values[index];
    return value === undefined || !Number.isFinite(value) ? 0 : value;
  };
  return {
    user: at(0),
    nice: at(1),
    system: at(2),
    idle: at(3),
    iowait: at(4),
    irq: at(5),
    softirq: at(6),
    steal: at(7),
    guest: at(8),
    guestNice: at(9),
  };
}

/** Percentages of one interval; `user + system + idle + other = 100`. */
export interface CpuPercentages {
  user: number;
  system: number;
  idle: number;
  other: number;
}

/**
 * CPU use between two readings (or since boot when `before` is undefined), in percent of all
 * CPUs. Guest time is moved from `user`/`nice` (where the kernel counts it) to `other`, so that
 * `other` = nice, iowait, irq, softirq, steal and guest (docs/metrics.md#what-each-value-means) and nothing is counted twice.
 * An interval without ticks (two readings in the same tick) reads as 100 % idle.
 */
export function cpuPercentages(after: CpuTimes, before: CpuTimes | undefined): CpuPercentages {
  const delta = (key: keyof CpuTimes): number => Math.max(0, after[key] - (before?.[key] ?? 0));
  const guest = delta('guest') + delta('guestNice');
  const user = Math.max(0, delta('user') - delta('guest'));
  const system = delta('system');
  const idle = delta('idle');
  const other =
    Math.max(0, delta('nice') - delta('guestNice')) +
    delta('iowait') +
    delta('irq') +
    delta('softirq') +
    delta('steal') +
    guest;
  const total = user + system + idle + other;
  if (total === 0) return { user: 0, system: 0, idle: 100, other: 0 };
  return {
    user: (user / total) * 100,
    system: (system / total) * 100,
    idle: (idle / total) * 100,
    other: (other / total) * 100,
  };
}
