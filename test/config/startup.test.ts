import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';

describe('start-up', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-main-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('starts on the embedded defaults, creates the config file, answers /ping, exits 0 on SIGTERM', async () => {
    const { child, exited, listening } = startMain({ CORE_ADDRESS: '127.0.0.1:0' }, dir);
    const url = await listening;
    const ping = await fetch(`${url}/ping`);
    assert.equal(await ping.text(), 'pong');
    assert.equal((await stat(join(dir, 'config', 'config.json'))).mode & 0o777, 0o600);
    child.kill('SIGTERM');
    const exit = await exited;
    assert.equal(exit.code, 0, exit.stderr);
  });

  it('stops with exit code 1 and names the key of an invalid value', async () => {
    const { exited } = startMain(
      { CORE_ADDRESS: '127.0.0.1:0', CORE_METRICS_INTERVAL_SECONDS: 'often' },
      dir,
    );
    const exit = await exited;
    assert.equal(exit.code, 1);
    assert.match(exit.stderr, /metrics\.interval_sec \(env CORE_METRICS_INTERVAL_SECONDS\): /);
  });
});
