import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';

const run = promisify(execFile);

/** `chattr +i` makes a directory unwritable even for root (mode bits do not stop root). */
async function immutable(dir: string, on: boolean): Promise<boolean> {
  try {
    await run('chattr', [on ? '+i' : '-i', dir]);
    return true;
  } catch {
    return false;
  }
}

describe('start-up refuses directories it cannot write (issue 10 item 3)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-writable-'));
  });
  after(async () => {
    await immutable(join(dir, 'frozen'), false);
    await rm(dir, { recursive: true, force: true });
  });

  it('stops with exit 1 naming db.dir when a file stands where the db directory should be', async () => {
    const home = join(dir, 'file-db');
    await mkdir(home);
    await writeFile(join(home, 'not-a-dir'), 'x');
    const { exited } = startMain(
      { CORE_ADDRESS: '127.0.0.1:0', CORE_API_AUTH_ENABLE: 'false', CORE_DB_DIR: join(home, 'not-a-dir') },
      home,
    );
    const exit = await exited;
    assert.equal(exit.code, 1);
    assert.match(exit.stderr, /db\.dir: .*not-a-dir is not writable \((ENOTDIR|EEXIST)\)/);
  });

  it('stops naming storage.disk.dir when the disk directory is immutable', async (t) => {
    const home = join(dir, 'frozen-home');
    const frozen = join(dir, 'frozen');
    await mkdir(home);
    await mkdir(frozen);
    if (!(await immutable(frozen, true))) return t.skip('chattr +i is not supported here');
    try {
      const { exited } = startMain(
        { CORE_ADDRESS: '127.0.0.1:0', CORE_API_AUTH_ENABLE: 'false', CORE_STORAGE_DISK_DIR: frozen },
        home,
      );
      const exit = await exited;
      assert.equal(exit.code, 1);
      assert.match(exit.stderr, /storage\.disk\.dir: .*frozen is not writable \(EPERM\)/);
      assert.deepEqual(await readdir(frozen), []);
    } finally {
      await immutable(frozen, false);
    }
  });
});
