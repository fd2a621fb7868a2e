/**
 * The reference server, datarhei Core v16.14.0 built from its tag outside this repository
 * (docs/performance.md has the build command), for the benchmarks that run it beside streamcore.
 * `REFERENCE_CORE` names the binary; without it those rounds are skipped or refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { freePort } from './measure.js';

export const REFERENCE_LABEL = 'datarhei Core v16.14.0 (reference)';

/** The binary `REFERENCE_CORE` names, or undefined when it is unset or not there. */
export function referenceBinary(): string | undefined {
  const binary = process.env.REFERENCE_CORE;
  return binary !== undefined && existsSync(binary) ? binary : undefined;
}

export interface ReferenceServer {
  child: ChildProcess;
  url: string;
}

/**
 * Starts the reference with its data under `dir` on a free loopback port and waits for `/ping`.
 * `env` adds or overrides its `CORE_*` settings (RTMP, SRT, auth, sessions…); RTMP and SRT are
 * off unless `env` turns them on.
 */
export async function startReferenceCore(
  binary: string,
  dir: string,
  env: Record<string, string> = {},
): Promise<ReferenceServer> {
  const port = await freePort();
  // The reference writes its config file but does not make the directory.
  await mkdir(join(dir, 'reference'), { recursive: true });
  const child = spawn(binary, [], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      CORE_CONFIGFILE: join(dir, 'reference', 'config.json'),
      CORE_DB_DIR: join(dir, 'reference', 'db'),
      CORE_STORAGE_DISK_DIR: join(dir, 'reference', 'data'),
      CORE_ADDRESS: `127.0.0.1:${port}`,
      CORE_LOG_LEVEL: 'info',
      // The reference refuses to start without a mime-types file; its source tree has one.
      CORE_STORAGE_MIMETYPES_FILE: join(dirname(binary), 'mime.types'),
      CORE_UPDATE_CHECK: 'false',
      CORE_RTMP_ENABLE: 'false',
      CORE_SRT_ENABLE: 'false',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`the reference exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/ping`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (attempt > 300) {
      child.kill();
      throw new Error('the reference did not answer /ping within 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url };
}

/** Stops a server child and waits for it to be gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
