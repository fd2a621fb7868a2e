/**
 * Starts the freshly built server once, so that it writes V8's code cache (src/boot/code-cache.ts)
 * before the first real start needs it: without it the first `npm start` after an install would
 * compile the whole bundle (issue 11, docs/performance.md#start-up-issue-11). The server runs with the
 * start script's Node flags (V8 accepts a cache only under the flags that made it), on a free
 * loopback port, with its config, db and storage in a temporary folder, and is stopped as soon as
 * the cache file is there. Should it not start (no ffmpeg yet, say), the build goes on: the first
 * start then writes the cache itself.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CODE_CACHE_FOLDER } from '../src/boot/code-cache.js';
import { readStartScript } from './start-script.js';

/** A start that has not written the cache in this long is given up on. */
const GIVE_UP_MS = 60_000;

export async function primeCodeCache(entry: string): Promise<void> {
  const cacheFolder = join(dirname(entry), CODE_CACHE_FOLDER);
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-prime-'));
  // Neither the builder's NODE_OPTIONS (part of the cache's key) nor its CORE_* settings.
  const inherited = Object.entries(process.env).filter(
    ([name]) => name !== 'NODE_OPTIONS' && !name.startsWith('CORE_'),
  );
  const child = spawn(process.execPath, [...readStartScript().flags, entry], {
    env: {
      ...Object.fromEntries(inherited),
      CORE_ADDRESS: '127.0.0.1:0',
      CORE_CONFIGFILE: join(dir, 'config.json'),
      CORE_DB_DIR: join(dir, 'db'),
      CORE_STORAGE_DISK_DIR: join(dir, 'data'),
      CORE_LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let running = true;
  void exited.then(() => (running = false));
  try {
    const deadline = Date.now() + GIVE_UP_MS;
    while (running && Date.now() < deadline && !hasCache(cacheFolder)) await sleep(20);
    if (hasCache(cacheFolder)) {
      process.stdout.write('build: code cache primed\n');
    } else {
      process.stdout.write(
        `build: code cache not primed (the first start writes it): ${running ? 'no cache in time' : lastLine(stderr)}\n`,
      );
    }
  } finally {
    if (running) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}

function hasCache(folder: string): boolean {
  try {
    return readdirSync(folder).some((name) => name.endsWith('.v8'));
  } catch {
    return false;
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? 'it exited';
}
