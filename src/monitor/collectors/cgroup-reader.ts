import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  parseCgroupPath,
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
  /** The cgroup directory that sets it (its `cpu.stat` counts what the limit applies to). */
  dir: string;
}

/** The tightest memory limit on the way up, with the usage of the cgroup that sets it, bytes. */
export interface MemoryLimit {
  maxBytes: number;
  currentBytes: number;
}

/**
 * Reads cgroup v2 limits for the server's own process: its cgroup comes from
 * `<procRoot>/self/cgroup`, its directory is under `cgroupRoot` (usually /sys/fs/cgroup). A limit
 * may be set on any ancestor, so every directory up to the root is checked and the tightest wins.
 * Without cgroup v2 (or inside a container whose cgroup path is not visible), only the existing
 * directories count, which may be just the root, and missing files mean "no limit".
 */
export class CgroupReader {
  private readonly procRoot: string;
  private readonly cgroupRoot: string;
  private chain: Promise<string[]> | undefined;

  constructor(procRoot: string, cgroupRoot: string) {
    this.procRoot = procRoot;
    this.cgroupRoot = resolve(cgroupRoot);
  }

  async cpuLimit(): Promise<CpuLimit | undefined> {
    let tightest: CpuLimit | undefined;
    for (const dir of await this.directories()) {
      const text = await readOptionalText(join(dir, 'cpu.max'));
      const cpus = text === undefined ? undefined : parseCpuMax(text);
      if (cpus !== undefined && (tightest === undefined || cpus < tightest.cpus)) tightest = { cpus, dir };
    }
    return tightest;
  }

  /** CPU time used by the cgroup `dir` since its creation. */
  async cpuUsage(dir: string): Promise<CgroupCpuUsage | undefined> {
    const text = await readOptionalText(join(dir, 'cpu.stat'));
    return text === undefined ? undefined : parseCpuStat(text);
  }

  async memoryLimit(): Promise<MemoryLimit | undefined> {
    let tightest: MemoryLimit | undefined;
    for (const dir of await this.directories()) {
      const maxText = await readOptionalText(join(dir, 'memory.max'));
      const maxBytes = maxText === undefined ? undefined : parseMemoryMax(maxText);
      if (maxBytes === undefined || (tightest !== undefined && maxBytes >= tightest.maxBytes)) continue;
      const currentText = await readOptionalText(join(dir, 'memory.current'));
      if (currentText === undefined) continue;
      tightest = { maxBytes, currentBytes: parseMemoryCurrent(currentText) };
    }
    return tightest;
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
    const dirs: string[] = [];
    let dir = path === undefined ? this.cgroupRoot : join(this.cgroupRoot, path);
    for (;;) {
      if (await isDirectory(dir)) dirs.push(dir);
      if (dir === this.cgroupRoot || !dir.startsWith(this.cgroupRoot)) break;
      dir = dirname(dir);
    }
    return dirs;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
