import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeDirectory, makeDirectorySync } from '../../src/persistence/make-dir.js';
import { startMain } from '../helpers/main-process.js';
import { startServer } from '../helpers/server.js';

/** A pid above every pid_max: never alive. */
const DEAD_PID = 999_999_999;

/** Fails the test if `promise` takes longer than `ms` (the bug was a loop without end). */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('directories that cannot be made (issue 10 item 9)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-odd-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('fails at once under /proc instead of spinning, and still makes nested directories', async () => {
    await within(
      5000,
      'makeDirectory under /proc',
      assert.rejects(
        makeDirectory('/proc/streamcore-none/db'),
        /cannot create directory \/proc\/streamcore-none/,
      ),
    );
    assert.throws(() => makeDirectorySync('/proc/streamcore-none/db'), /ENOENT: cannot create directory/);
    await writeFile(join(dir, 'file'), 'x');
    await assert.rejects(makeDirectory(join(dir, 'file', 'sub')), /ENOTDIR/);
    await makeDirectory(join(dir, 'a', 'b', 'c'));
    makeDirectorySync(join(dir, 'a', 'x', 'y'));
    assert.ok(existsSync(join(dir, 'a', 'b', 'c')) && existsSync(join(dir, 'a', 'x', 'y')));
  });

  it('stops the server with a clear message for CORE_CONFIGFILE or CORE_DB_DIR under /proc', async () => {
    // Generous: a loaded machine takes tens of seconds to start tsx; the bug never ended at all.
    const exitOf = async (env: Record<string, string>, cwd: string, what: string) => {
      const run = startMain({ ...env, CORE_ADDRESS: '127.0.0.1:0' }, cwd);
      try {
        return await within(120_000, what, run.exited);
      } finally {
        run.child.kill('SIGKILL');
      }
    };
    const config = await exitOf(
      { CORE_CONFIGFILE: '/proc/streamcore-none/config.json' },
      dir,
      'start with CORE_CONFIGFILE under /proc',
    );
    assert.equal(config.code, 1, config.stderr);
    assert.match(config.stderr, /config file \/proc\/streamcore-none\/config\.json: cannot be written/);

    const home = join(dir, 'home');
    await mkdir(home);
    const db = await exitOf(
      { CORE_DB_DIR: '/proc/streamcore-none/db' },
      home,
      'start with CORE_DB_DIR under /proc',
    );
    assert.equal(db.code, 1, db.stderr);
    assert.match(db.stderr, /db\.dir: \/proc\/streamcore-none\/db is not writable \(ENOENT\)/);
  });
});

describe('what crashed servers left (issue 10 item 9)', () => {
  it("removes dead servers' db temporaries and vstats directories, and keeps live ones", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-leftovers-'));
    // A live process that is not this one: its files must stay.
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    const live = sleeper.pid as number;
    const vstats = join(tmpdir(), 'streamcore-vstats-');
    try {
      await mkdir(join(dir, 'db'), { recursive: true });
      const names = {
        dead: `.db.json.${DEAD_PID}-0123456789ab.tmp`,
        unowned: '.db.json.0123456789ab.tmp',
        live: `.db.json.${live}-0123456789ab.tmp`,
        other: '.other.json.0123456789ab.tmp',
      };
      for (const name of Object.values(names)) await writeFile(join(dir, 'db', name), 'partial');
      await mkdir(`${vstats}${DEAD_PID}-AbC123`);
      await mkdir(`${vstats}${live}-AbC123`);
      const server = await startServer({ dir });
      try {
        assert.ok(!existsSync(join(dir, 'db', names.dead)), 'a dead server temporary is removed');
        assert.ok(!existsSync(join(dir, 'db', names.unowned)), 'an old-style temporary is removed');
        assert.ok(existsSync(join(dir, 'db', names.live)), 'a live server temporary stays');
        assert.ok(existsSync(join(dir, 'db', names.other)), 'another file temporary stays');
        assert.ok(!existsSync(`${vstats}${DEAD_PID}-AbC123`), 'a dead server vstats directory is removed');
        assert.ok(existsSync(`${vstats}${live}-AbC123`), 'a live server vstats directory stays');
      } finally {
        await server.close();
      }
    } finally {
      sleeper.kill('SIGKILL');
      await rm(`${vstats}${DEAD_PID}-AbC123`, { recursive: true, force: true });
      await rm(`${vstats}${live}-AbC123`, { recursive: true, force: true });
      await rm(dir, { recursive: true, force: true });
    }
  });
});
