import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** CPU time and memory of one process as the kernel reports them. */
export interface ProcessUsageSample {
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** Resident set size, bytes. */
  rssBytes: number;
}

/**
 * Clock ticks per second of `/proc/<pid>/stat` (USER_HZ). It is 100 on every Linux architecture
 * Node runs on; the kernel keeps it fixed for user space whatever its internal HZ.
 */
export const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime (fields 14 and 15) of `/proc/<pid>/stat`; the command name may contain spaces. */
export function parseProcStatCpuTicks(text: string): number | undefined {
  const close = text.lastIndexOf(')');
  if (close === -1) return undefined;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return Number.isFinite(utime) && Number.isFinite(stime) ? utime + stime : undefined;
}

/** `VmRSS` of `/proc/<pid>/status` in bytes (the kernel prints kB). */
export function parseProcStatusRssBytes(text: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  return match === null ? undefined : Number(match[1]) * 1024;
}

/** Reads the usage of `pid` under `procRoot`; `undefined` when the process is gone. */
export async function readProcessUsage(
  procRoot: string,
  pid: number,
): Promise<ProcessUsageSample | undefined> {
  try {
    const [stat, status] = await Promise.all([
      readFile(join(procRoot, String(pid), 'stat'), 'utf8'),
      readFile(join(procRoot, String(pid), 'status'), 'utf8'),
    ]);
    const cpuTicks = parseProcStatCpuTicks(stat);
    const rssBytes = parseProcStatusRssBytes(status);
    if (cpuTicks === undefined || rssBytes === undefined) return undefined;
    return { cpuTicks, rssBytes };
  } catch {
    return undefined;
  }
}

/**
 * Turns successive samples into a CPU percentage of the whole machine (100 = every CPU busy).
 */
export class CpuMeter {
  private last: { ticks: number; atMs: number } | undefined;

  constructor(private readonly cpus: number) {}

  /** Percent over the time since the previous sample; `undefined` for the first one. */
  update(ticks: number, nowMs: number): number | undefined {
    const previous = this.last;
    this.last = { ticks, atMs: nowMs };
    if (previous === undefined || nowMs <= previous.atMs || ticks < previous.ticks) return undefined;
    const busySeconds = (ticks - previous.ticks) / CLOCK_TICKS_PER_SECOND;
    return (busySeconds / ((nowMs - previous.atMs) / 1000) / this.cpus) * 100;
  }
}
