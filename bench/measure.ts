/** Small measuring helpers the benchmarks share: medians, a child's CPU time, CPU pinning, ports. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { readStartScript } from '../scripts/start-script.js';

/** USER_HZ on Linux: the unit of the CPU times in /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_SEC = 100;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The fields of a /proc/<pid>/stat text after the command name (`[0]` is field 3, the state): the
 * name is in parentheses and may itself hold spaces and parentheses.
 */
export function procStatFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function statFields(child: ChildProcess): string[] {
  return procStatFields(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
}

/** CPU time (user + system) of a child so far, in clock ticks. */
export function cpuTicks(child: ChildProcess): number {
  return cpuTicksOfPid(child.pid!);
}

/** CPU time (user + system) of the process `pid` so far, in clock ticks. */
export function cpuTicksOfPid(pid: number | string): number {
  return cpuTicksIn(procStatFields(readFileSync(`/proc/${pid}/stat`, 'utf8')));
}

/** utime + stime, clock ticks, from the fields `procStatFields` gives. */
export function cpuTicksIn(fields: readonly string[]): number {
  return Number(fields[11]) + Number(fields[12]);
}

/** Minor page faults of a child so far (pages touched for the first time or again after a trim). */
export function minorFaults(child: ChildProcess): number {
  return Number(statFields(child)[7]);
}

/** The part of `cpuTicks` spent in the kernel (system time: page faults, mmap, socket writes). */
export function systemCpuTicks(child: ChildProcess): number {
  return Number(statFields(child)[12]);
}

/**
 * The load generator (this process) on CPU 0, the servers (all their threads) on CPU 1, so a server
 * never shares its core with the load. Answers what was done, for the result's header.
 */
export function pinLoadAndServers(servers: ChildProcess[]): string {
  if (availableParallelism() < 2) return 'not pinned: fewer than 2 CPUs';
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    for (const server of servers) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(server.pid)], { stdio: 'ignore' });
    }
    return 'load generator on CPU 0, the servers on CPU 1';
  } catch (error) {
    return `not pinned: ${(error as Error).message}`;
  }
}

/** A loopback port that was free a moment ago (bound and closed), for a server that cannot take 0. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Whether `GET /ping` on the loopback port answers 200 (within a second). */
export function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', timeout: 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Node's arguments to run the built server as `npm start` does (its flags, `dist/main.js`), for
 * rounds beside the reference; throws when the build is missing.
 */
export function builtServerArgs(): string[] {
  const script = readStartScript();
  const entry = join(import.meta.dirname, '..', script.entry);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  return [...script.flags, entry];
}

/**
 * Starts the built server (`builtServerArgs`) with its config, db and data under `dir`: an API on
 * a loopback port of its choosing unless `config` names one, log level warn; `config`'s top-level
 * keys replace the defaults'.
 */
export async function spawnBuiltServer(
  dir: string,
  config: Record<string, unknown>,
  /** A command the server runs under (e.g. `taskset -c 0`), so that processes it forks inherit it. */
  prefix: string[] = [],
): Promise<ChildProcess> {
  const configFile = join(dir, 'config.json');
  await writeFile(
    configFile,
    JSON.stringify({
      address: '127.0.0.1:0',
      db: { dir: join(dir, 'db') },
      storage: { disk: { dir: join(dir, 'data') } },
      ...config,
    }),
  );
  // SERVER_NODE_FLAGS adds Node flags to the server alone (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
  const extra = (process.env.SERVER_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
  const [command, ...args] = [...prefix, process.execPath, ...extra, ...builtServerArgs()];
  return spawn(command ?? process.execPath, args, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'warn' },
  });
}
