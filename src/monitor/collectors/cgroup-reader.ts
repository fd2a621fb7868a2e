import { stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import {
  parseCfsQuota,
  parseCgroupPath,
  parseCgroupV1Membership,
  parseCpuacct,
  parseCpuMax,
  parseCpuStat,
  parseMemoryCurrent,
  parseMemoryMax,
  type CgroupCpuUsage,
} from './parse/index.js';
import { readOptionalText } from './read-text.js';

/** The tightest CPU limit on the way from the process's cgroup to the root. */
export interface CpuLimit {
  /** Limit in CPUs (quota / period), may be fractional. */
  cpus: number;
  /**
   * The directory whose CPU time the limit applies to: the cgroup that sets it (v2 `cpu.stat`), or
   * the same cgroup in the v1 `cpuacct` hierarchy (`cpuacct.usage`, `cpuacct.stat`).
   */
  dir: string;
  layout: 'v1' | 'v2';
}

/** The tightest memory limit on the way up, with the usage of the cgroup that sets it, bytes. */
export interface MemoryLimit {
  maxBytes: number;
  currentBytes: number;
}

/**
 * Reads the cgroup limits of the server's own process, cgroup v2 and v1 alike: its cgroups come
 * from `<procRoot>/self/cgroup`, their directories are under `cgroupRoot` (usually
 * /sys/fs/cgroup; a v1 hierarchy is mounted there under its controllers' names, e.g.
 * `cpu,cpuacct`). A limit may be set on any ancestor, so every directory up to the hierarchy's root
 * is checked and the tightest wins. Inside a container whose cgroup path is not visible, only the
 * existing directories count, which may be just the root, and missing files mean "no limit".
 */
export class CgroupReader {
  private readonly procRoot: string;
  private readonly cgroupRoot: string;
  private chain: Promise<string[]> | undefined;
  private readonly v1Chains = new Map<string, Promise<V1Chain | undefined>>();

  constructor(procRoot: string, cgroupRoot: string) {
    this.procRoot = procRoot;
    this.cgroupRoot = resolve(cgroupRoot);
  }

  async cpuLimit(): Promise<CpuLimit | undefined> {
    let tightest: CpuLimit | undefined;
    const consider = (limit: CpuLimit): void => {
      if (tightest === undefined || limit.cpus < tightest.cpus) tightest = limit;
    };
    for (const dir of await this.directories()) {
      const text = await readOptionalText(join(dir, 'cpu.max'));
      const cpus = text === undefined ? undefined : parseCpuMax(text);
      if (cpus !== undefined) consider({ cpus, dir, layout: 'v2' });
    }
    const cpu = await this.v1Chain('cpu');
    const cpuacct = await this.v1Chain('cpuacct');
    for (const dir of cpu?.dirs ?? []) {
      const quota = await readOptionalText(join(dir, 'cpu.cfs_quota_us'));
      const period = await readOptionalText(join(dir, 'cpu.cfs_period_us'));
      const cpus = quota === undefined || period === undefined ? undefined : parseCfsQuota(quota, period);
      // The CPU time of that cgroup is counted by cpuacct: the same path in its hierarchy (the same
      // directory when the two controllers are mounted together).
      if (cpus !== undefined && cpu !== undefined && cpuacct !== undefined) {
        consider({ cpus, dir: join(cpuacct.base, relative(cpu.base, dir)), layout: 'v1' });
      }
    }
    return tightest;
  }

  /** CPU time used by the cgroup a limit applies to, since its creation. */
  async cpuUsage(limit: CpuLimit): Promise<CgroupCpuUsage | undefined> {
    if (limit.layout === 'v2') {
      const text = await readOptionalText(join(limit.dir, 'cpu.stat'));
      return text === undefined ? undefined : parseCpuStat(text);
    }
    const usage = await readOptionalText(join(limit.dir, 'cpuacct.usage'));
    const stat = await readOptionalText(join(limit.dir, 'cpuacct.stat'));
    return usage === undefined || stat === undefined ? undefined : parseCpuacct(usage, stat);
  }

  async memoryLimit(): Promise<MemoryLimit | undefined> {
    let tightest: MemoryLimit | undefined;
    const files = [
      ...(await this.directories()).map((dir) => ({ dir, max: 'memory.max', current: 'memory.current' })),
      // v1 writes "no limit" as a huge number (about 2^63), which the host comparison discards.
      ...((await this.v1Chain('memory'))?.dirs ?? []).map((dir) => ({
        dir,
        max: 'memory.limit_in_bytes',
        current: 'memory.usage_in_bytes',
      })),
    ];
    for (const { dir, max, current } of files) {
      const maxText = await readOptionalText(join(dir, max));
      const maxBytes = maxText === undefined ? undefined : parseMemoryMax(maxText, max);
      if (maxBytes === undefined || (tightest !== undefined && maxBytes >= tightest.maxBytes)) continue;
      const currentText = await readOptionalText(join(dir, current));
      if (currentText === undefined) continue;
      tightest = { maxBytes, currentBytes: parseMemoryCurrent(currentText, current) };
    }
    return tightest;
  }

  /**
   * The v1 hierarchy holding `controller`: where it is mounted and the existing directories from
   * the process's cgroup up to that mount; `undefined` without one (a v2-only host). Resolved once.
   */
  private v1Chain(controller: string): Promise<V1Chain | undefined> {
    let chain = this.v1Chains.get(controller);
    if (chain === undefined) {
      chain = this.resolveV1Chain(controller).catch((error: unknown) => {
        this.v1Chains.delete(controller); // try again next time
        throw error;
      });
      this.v1Chains.set(controller, chain);
    }
    return chain;
  }

  private async resolveV1Chain(controller: string): Promise<V1Chain | undefined> {
    const text = await readOptionalText(join(this.procRoot, 'self', 'cgroup'));
    const membership = text === undefined ? undefined : parseCgroupV1Membership(text, controller);
    if (membership === undefined) return undefined;
    // Mounted under the controller's own name, or under the joined names with a symlink per name.
    for (const name of [controller, membership.controllers.join(',')]) {
      const base = join(this.cgroupRoot, name);
      if (await isDirectory(base))
        return { base, dirs: await existingUpTo(join(base, membership.path), base) };
    }
    return undefined;
  }

  /** Existing cgroup directories from the process's own up to the root; resolved once. */
  private directories(): Promise<string[]> {
    this.chain ??= this.resolveChain().catch((error: unknown) => {
      this.chain = undefined; // try again next time
      throw error;
    });
    return this.chain;
  }

  private async resolveChain(): Promise<string[]> {
    const text = await readOptionalText(join(this.procRoot, 'self', 'cgroup'));
    const path = text === undefined ? undefined : parseCgroupPath(text);
    return existingUpTo(path === undefined ? this.cgroupRoot : join(this.cgroupRoot, path), this.cgroupRoot);
  }
}

interface V1Chain {
  /** Where the hierarchy is mounted. */
  base: string;
  dirs: string[];
}

/** The existing directories from `dir` up to `root`, both included. */
async function existingUpTo(dir: string, root: string): Promise<string[]> {
  const dirs: string[] = [];
  let current = dir;
  for (;;) {
    if (await isDirectory(current)) dirs.push(current);
    if (current === root || !current.startsWith(root)) break;
    current = dirname(current);
  }
  return dirs;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
