/** Small measuring helpers the benchmarks share: medians, a child's CPU time, CPU pinning, ports. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';

/** USER_HZ on Linux: the unit of the CPU times in /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_SEC = 100;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The fields of /proc/<pid>/stat after the command name (`statFields(c)[0]` is field 3, the state). */
function statFields(child: ChildProcess): string[] {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system) of a child so far, in clock ticks. */
export function cpuTicks(child: ChildProcess): number {
  const fields = statFields(child);
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

/** Waits until the reference (a child that cannot report its URL) answers `GET /ping`, up to 30 s. */
export async function waitForReference(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`the reference exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/ping`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (attempt > 300) throw new Error('the reference did not answer /ping within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts built streamcore (`node dist/main.js`, `prefix` before it, e.g. taskset) with `configFile`
 * and resolves with its base URL from the start-up log line (log level info).
 */
export async function startBuiltStreamcore(
  root: string,
  configFile: string,
  prefix: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const [command, ...args] = [...prefix, process.execPath, join(root, 'dist', 'main.js')];
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`streamcore exited with ${code}: ${output}`)));
  });
  return { url, child };
}

/**
 * The environment the reference runs with in the benchmarks: its files under `home`, loopback
 * `port`, auth on with `username`/`password`, RTMP, SRT and the update check off, log level info.
 */
export function referenceEnvironment(
  binary: string,
  home: string,
  port: number,
  login: { username: string; password: string },
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    CORE_CONFIGFILE: join(home, 'config.json'),
    CORE_DB_DIR: join(home, 'db'),
    CORE_STORAGE_DISK_DIR: join(home, 'data'),
    CORE_ADDRESS: `127.0.0.1:${port}`,
    CORE_API_AUTH_ENABLE: 'true',
    CORE_API_AUTH_USERNAME: login.username,
    CORE_API_AUTH_PASSWORD: login.password,
    CORE_LOG_LEVEL: 'info',
    // The reference refuses to start without a mime-types file; its source tree has one.
    CORE_STORAGE_MIMETYPES_FILE: join(dirname(binary), 'mime.types'),
    CORE_UPDATE_CHECK: 'false',
    CORE_RTMP_ENABLE: 'false',
    CORE_SRT_ENABLE: 'false',
  };
}
