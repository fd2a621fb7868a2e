import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { buildServer } from '../../scripts/build-server.js';
import { readStartScript } from '../../scripts/start-script.js';
import {
  CODE_CACHE_FOLDER,
  codeCacheFile,
  readCodeCache,
  writeCodeCache,
} from '../../src/boot/code-cache.js';
import { startBuiltMain } from '../helpers/main-process.js';

/**
 * The built entry compiles the server bundle with V8's code cache (src/boot/, issue 11). A cache
 * that V8 would take but that is not this bundle's, or is damaged, must never reach V8: a damaged
 * payload crashes the process while it loads (seen: exit by SIGSEGV). These tests damage real
 * cache files and start the real built server on them.
 */
describe('code cache files', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-code-cache-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads back what was written, and reports a missing file', () => {
    const file = join(dir, CODE_CACHE_FOLDER, 'a.v8');
    assert.deepEqual(readCodeCache(file), { state: 'missing' });
    const payload = Buffer.from('compiled code, as far as this test is concerned');
    writeCodeCache(file, payload);
    assert.deepEqual(readCodeCache(file), { state: 'found', data: payload });
    assert.deepEqual(readdirSync(join(dir, CODE_CACHE_FOLDER)), ['a.v8'], 'no temporary file left');
  });

  it('reports a file with any changed byte, a truncated one and an empty one as damaged', () => {
    const file = join(dir, 'b.v8');
    const payload = Buffer.alloc(4096, 7);
    writeCodeCache(file, payload);
    const whole = readFileSync(file);
    for (const at of [0, 31, 32, 1000, whole.length - 1]) {
      const changed = Buffer.from(whole);
      changed[at] = (changed[at] ?? 0) ^ 1;
      writeFileSync(file, changed);
      assert.deepEqual(readCodeCache(file), { state: 'damaged' }, `byte ${at}`);
    }
    writeFileSync(file, whole.subarray(0, whole.length - 1));
    assert.deepEqual(readCodeCache(file), { state: 'damaged' });
    writeFileSync(file, Buffer.alloc(0));
    assert.deepEqual(readCodeCache(file), { state: 'damaged' });
  });

  it('names the file by the bundle it was made from', () => {
    const one = codeCacheFile(dir, Buffer.from('bundle one'));
    const other = codeCacheFile(dir, Buffer.from('bundle two'));
    assert.notEqual(one, other);
    assert.equal(codeCacheFile(dir, Buffer.from('bundle one')), one);
  });
});

describe('the built entry and its code cache', () => {
  let outDir: string;
  const dirs: string[] = [];
  before(async () => {
    outDir = await mkdtemp(join(tmpdir(), 'streamcore-built-cache-'));
    dirs.push(outDir);
    await buildServer(outDir);
  });
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  /**
   * Starts the built entry as `npm start` does (its Node flags), pings it, waits for the line that
   * says the cache was written when one is expected, runs `whileUp` (given the process, its
   * folder and its URL), and stops it. Returns its log. `extraFlags` follow the start script's.
   */
  async function startOnce(
    expectWrite: boolean,
    extraFlags: string[] = [],
    whileUp?: (up: { pid: number; dir: string; url: string }) => Promise<void>,
  ): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-cache-start-'));
    dirs.push(dir);
    const server = startBuiltMain(
      join(outDir, 'main.js'),
      {
        CORE_ADDRESS: '127.0.0.1:0',
        CORE_CONFIGFILE: join(dir, 'config.json'),
        CORE_DB_DIR: join(dir, 'db'),
        CORE_STORAGE_DISK_DIR: join(dir, 'data'),
        CORE_LOG_LEVEL: 'debug',
      },
      dir,
      [...readStartScript().flags, ...extraFlags],
    );
    let log = '';
    server.child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      const url = await server.listening;
      assert.equal(await (await fetch(`${url}/ping`)).text(), 'pong');
      while (expectWrite && !/code cache (not )?written/.test(log)) await sleep(20);
      await whileUp?.({ pid: server.child.pid!, dir, url });
    } finally {
      server.child.kill('SIGTERM');
    }
    const exit = await server.exited;
    assert.equal(exit.code, 0, exit.stderr);
    return exit.stdout;
  }

  function cacheFiles(): string[] {
    const folder = join(outDir, CODE_CACHE_FOLDER);
    return existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.v8')) : [];
  }

  it('writes the cache on the first start and reads it on the next', async () => {
    assert.deepEqual(cacheFiles(), [], 'a fresh build has no cache');
    const first = await startOnce(true);
    assert.match(first, /"was":"missing","msg":"code cache written"/);
    assert.equal(cacheFiles().length, 1);
    const second = await startOnce(false);
    assert.doesNotMatch(second, /code cache/);
  });

  it('starts on a damaged cache, says so, and writes a whole one', async () => {
    const [name] = cacheFiles();
    assert.ok(name !== undefined);
    const file = join(outDir, CODE_CACHE_FOLDER, name);
    const bytes = readFileSync(file);
    for (let at = 100_000; at < bytes.length; at += 50_000) bytes[at] = (bytes[at] ?? 0) ^ 0xff;
    writeFileSync(file, bytes);
    const damaged = await startOnce(true);
    assert.match(damaged, /code cache damaged, rewriting it/);
    assert.match(damaged, /"was":"damaged","msg":"code cache written"/);
    assert.equal(readCodeCache(file).state, 'found');
    assert.doesNotMatch(await startOnce(false), /code cache/);
  });

  it('keeps neither the bundle nor the cache in memory once started', async () => {
    // A probe that collects all garbage and writes the ArrayBuffers' bytes on SIGUSR2. Flags of
    // their own, so a cache of their own: the first start writes it, the second reads it.
    const probe = `import { writeFileSync } from 'node:fs';
      process.on('SIGUSR2', () => {
        gc();
        writeFileSync('memory.json', JSON.stringify(process.memoryUsage()));
      });`;
    const flags = ['--expose-gc', `--import=data:text/javascript,${encodeURIComponent(probe)}`];
    await startOnce(true, flags);
    let arrayBuffers: number | undefined;
    await startOnce(false, flags, async ({ pid, dir }) => {
      process.kill(pid, 'SIGUSR2');
      const file = join(dir, 'memory.json');
      const deadline = Date.now() + 10_000;
      while (!existsSync(file) && Date.now() < deadline) await sleep(20);
      await sleep(50); // one small write
      arrayBuffers = (JSON.parse(readFileSync(file, 'utf8')) as { arrayBuffers: number }).arrayBuffers;
    });
    // The cache alone is 2.4 MB, the bundle 2.8 MB; the server's own buffers at start are a few
    // hundred KB.
    assert.ok(
      arrayBuffers !== undefined && arrayBuffers < 1024 * 1024,
      `ArrayBuffers hold ${arrayBuffers} bytes`,
    );
  });
});
