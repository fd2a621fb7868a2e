import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';
import { rssBytes, samplePeakRss, streamedPut } from './upload-client.js';

const MIB = 1024 * 1024;
/** How far above its idle RSS the server may go during an upload. */
const RSS_HEADROOM = 32 * MIB;

/** Whether this machine lets us mount a small tmpfs (root in a sandbox): the real "disk full". */
function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('uploads are streamed, not held in memory', { timeout: 180_000 }, () => {
  let dir: string;
  let url: string;
  let token: string;
  let pid: number;
  let fullDisk: string;
  let tmpfsMounted = false;
  let stopServer: () => Promise<unknown>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-upload-'));
    fullDisk = join(dir, 'data', 'small');
    await mkdir(fullDisk, { recursive: true });
    tmpfsMounted = mountTmpfs(fullDisk, '8m');
    const server = startMain(
      {
        CORE_ADDRESS: '127.0.0.1:0',
        CORE_DB_DIR: join(dir, 'db'),
        CORE_STORAGE_DISK_DIR: join(dir, 'data'),
        CORE_STORAGE_MEMORY_MAX_SIZE_MBYTES: '16',
        CORE_API_AUTH_ENABLE: 'true',
        CORE_API_AUTH_USERNAME: 'admin',
        CORE_API_AUTH_PASSWORD: 'upload-password',
        CORE_STORAGE_MEMORY_AUTH_ENABLE: 'true',
        CORE_STORAGE_MEMORY_AUTH_USERNAME: 'writer',
        CORE_STORAGE_MEMORY_AUTH_PASSWORD: 'memfs-password',
        // As `npm start` runs it: a small young generation frees the socket's read buffers early.
        NODE_OPTIONS: '--max-semi-space-size=1',
      },
      dir,
    );
    stopServer = async () => {
      server.child.kill('SIGTERM');
      return server.exited;
    };
    void server.exited.then((exit) => {
      if (exit.code !== 0) console.log(`server exited: ${exit.code} ${exit.stderr.slice(-3000)}`);
    });
    url = await server.listening;
    pid = server.child.pid ?? 0;
    const login = await fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'upload-password' }),
    });
    token = ((await login.json()) as { access_token: string }).access_token;
  });
  after(async () => {
    await stopServer();
    if (tmpfsMounted) execFileSync('umount', [fullDisk]);
    await rm(dir, { recursive: true, force: true });
  });

  const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });

  /** RSS now, after a short settle: the baseline an upload is measured against. */
  async function idleRss(): Promise<number> {
    // One small request first, so lazily loaded code paths are not counted as the upload's.
    await fetch(`${url}/api/v3/fs/disk/warm.txt`, { method: 'PUT', headers: auth(), body: 'warm' });
    return rssBytes(pid);
  }

  it('writes 300 MB to the disk with RSS within 32 MiB of idle', async () => {
    const idle = await idleRss();
    const sampler = samplePeakRss(pid);
    const answer = await streamedPut(`${url}/api/v3/fs/disk/big/upload.bin`, {
      totalBytes: 300 * MIB,
      headers: auth(),
    });
    const peak = sampler.stop();
    assert.equal(answer.status, 201, answer.body);
    assert.equal((await stat(join(dir, 'data', 'big', 'upload.bin'))).size, 300 * MIB);
    console.log(`disk upload 300 MiB: idle ${mb(idle)} MiB, peak ${mb(peak)} MiB`);
    assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);
    assert.deepEqual(await temporaryFiles(join(dir, 'data', 'big')), [], 'no temporary file is left');
  });

  it('writes a chunked 200 MB body to the disk with flat memory as well', async () => {
    const idle = await idleRss();
    const sampler = samplePeakRss(pid);
    const answer = await streamedPut(`${url}/api/v3/fs/disk/big/chunked.bin`, {
      totalBytes: 200 * MIB,
      headers: auth(),
      declare: false,
    });
    const peak = sampler.stop();
    assert.equal(answer.status, 201, answer.body);
    assert.equal((await stat(join(dir, 'data', 'big', 'chunked.bin'))).size, 200 * MIB);
    console.log(`disk upload 200 MiB chunked: idle ${mb(idle)} MiB, peak ${mb(peak)} MiB`);
    assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);
  });

  it('answers 507 at once on a full disk, removes the temporary file, and stops reading', async (t) => {
    if (!tmpfsMounted) {
      t.skip('mounting a tmpfs needs root');
      return;
    }
    const idle = await idleRss();
    const sampler = samplePeakRss(pid);
    const answer = await streamedPut(`${url}/api/v3/fs/disk/small/too-big.bin`, {
      totalBytes: 512 * MIB,
      headers: auth(),
    });
    const peak = sampler.stop();
    assert.equal(answer.status, 507, answer.body);
    const envelope = JSON.parse(answer.body) as { code: number; message: string; details: string[] };
    assert.equal(envelope.code, 507);
    assert.match(envelope.details.join(' '), /full/);
    assert.ok(answer.sentBytes < 128 * MIB, `the client sent ${mb(answer.sentBytes)} MiB before the 507`);
    assert.deepEqual(await readdir(fullDisk), [], 'the temporary file is removed');
    assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);
  });

  it('refuses a memfs upload that cannot fit from its Content-Length, before reading it', async () => {
    const idle = await idleRss();
    const sampler = samplePeakRss(pid);
    const answer = await streamedPut(`${url}/api/v3/fs/mem/too-big.bin`, {
      totalBytes: 400 * MIB,
      headers: auth(),
    });
    const peak = sampler.stop();
    assert.equal(answer.status, 413, answer.body);
    assert.ok(answer.sentBytes < 128 * MIB, `the client sent ${mb(answer.sentBytes)} MiB before the 413`);
    assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);
  });

  it('stops a chunked memfs upload at the byte past the limit', async () => {
    const basic = Buffer.from('writer:memfs-password').toString('base64');
    const answer = await streamedPut(`${url}/memfs/chunked-too-big.bin`, {
      totalBytes: 400 * MIB,
      headers: { authorization: `Basic ${basic}` },
      declare: false,
    });
    assert.equal(answer.status, 413, answer.body);
    assert.ok(answer.sentBytes < 128 * MIB, `the client sent ${mb(answer.sentBytes)} MiB before the 413`);
    assert.equal((await fetch(`${url}/memfs/chunked-too-big.bin`)).status, 404);
  });

  it('answers an anonymous large PUT with 401 and does not read its body to the end', async () => {
    const idle = await idleRss();
    const sampler = samplePeakRss(pid);
    const started = Date.now();
    const answer = await streamedPut(`${url}/api/v3/fs/disk/anonymous.bin`, { totalBytes: 1024 * MIB });
    const peak = sampler.stop();
    assert.equal(answer.status, 401, answer.body);
    assert.equal(answer.headers.connection, 'close');
    assert.ok(
      answer.sentBytes < 128 * MIB,
      `the client sent ${mb(answer.sentBytes)} MiB in ${Date.now() - started} ms`,
    );
    assert.ok(peak - idle < RSS_HEADROOM, `RSS rose from ${mb(idle)} to ${mb(peak)} MiB`);
    await assert.rejects(stat(join(dir, 'data', 'anonymous.bin')));
  });
});

function mb(bytes: number): string {
  return (bytes / MIB).toFixed(1);
}

async function temporaryFiles(directory: string): Promise<string[]> {
  return (await readdir(directory)).filter((name) => name.endsWith('.upload'));
}
