import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveBindAddress, defaultConfig } from '../../src/config/index.js';
import { acceptsTcp as accepts } from '../helpers/listener-probe.js';
import { startMain } from '../helpers/main-process.js';

interface SavedAuth {
  api: { auth: { enable: boolean; username: string; password: string } };
}

async function stopMain(run: ReturnType<typeof startMain>): Promise<string> {
  run.child.kill('SIGTERM');
  const exit = await run.exited;
  assert.equal(exit.code, 0, exit.stderr);
  return exit.stdout;
}

describe('safe first start (docs/configuration.md#keys)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'streamcore-first-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('creates the file with auth on for admin, prints the password once, and the API needs it', async () => {
    const home = join(dir, 'fresh');
    const first = startMain({ CORE_ADDRESS: '127.0.0.1:0' }, await mkdirp(home));
    const url = await first.listening;
    const file = join(home, 'config', 'config.json');
    const saved = JSON.parse(await readFile(file, 'utf8')) as SavedAuth;
    assert.equal(saved.api.auth.enable, true);
    assert.equal(saved.api.auth.username, 'admin');
    assert.ok(saved.api.auth.password.length >= 20);
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    assert.equal((await fetch(`${url}/api/v3/process`)).status, 401);
    const login = await fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: saved.api.auth.password }),
    });
    assert.equal(login.status, 200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    const list = await fetch(`${url}/api/v3/process`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(list.status, 200);
    await stopMain(first);
    const firstExit = await first.exited;
    assert.ok(firstExit.stderr.includes(`password: ${saved.api.auth.password}`), firstExit.stderr);
    assert.ok(firstExit.stderr.includes(file), 'names where the password is stored');
    // The JSON log never holds it.
    assert.ok(!firstExit.stdout.includes(saved.api.auth.password));

    const second = startMain({ CORE_ADDRESS: '127.0.0.1:0' }, home);
    await second.listening;
    await stopMain(second);
    const secondExit = await second.exited;
    assert.ok(!secondExit.stderr.includes(saved.api.auth.password), 'printed only on the first start');
    assert.doesNotMatch(secondExit.stdout, /api\.auth\.enable is false/);
  });

  it('prints nothing when the environment sets the credentials', async () => {
    const home = await mkdirp(join(dir, 'env-credentials'));
    const run = startMain(
      {
        CORE_ADDRESS: '127.0.0.1:0',
        CORE_API_AUTH_USERNAME: 'ops',
        CORE_API_AUTH_PASSWORD: 'from-env-secret',
      },
      home,
    );
    const url = await run.listening;
    assert.equal((await fetch(`${url}/api/v3/process`)).status, 401);
    await stopMain(run);
    const exit = await run.exited;
    assert.doesNotMatch(exit.stderr, /password:/);
  });

  it('with auth explicitly off and no host in the address: loopback only, and a warning at every start', async () => {
    const home = await mkdirp(join(dir, 'open'));
    await mkdirp(join(home, 'config'));
    await writeFile(
      join(home, 'config', 'config.json'),
      JSON.stringify({ address: ':0', api: { auth: { enable: false } } }),
    );
    for (let start = 0; start < 2; start++) {
      const run = startMain({}, home);
      const url = await run.listening;
      const port = Number(new URL(url).port);
      assert.equal(await accepts('127.0.0.1', port), true);
      // 127.0.0.2 is loopback too, but a socket bound to 127.0.0.1 only does not take it, while
      // one bound to every interface (the reference's default) does.
      assert.equal(await accepts('127.0.0.2', port), false, 'not bound to every interface');
      const stdout = await stopMain(run);
      assert.match(stdout, /"level":40,[^\n]*"loopbackOnly":true[^\n]*api\.auth\.enable is false/);
      assert.doesNotMatch(stdout, /password/);
    }
  });

  it('with auth off and an address that names a host: binds it and still warns', async () => {
    const home = await mkdirp(join(dir, 'named'));
    const run = startMain({ CORE_ADDRESS: '0.0.0.0:0', CORE_API_AUTH_ENABLE: 'false' }, home);
    // 0.0.0.0 is named on purpose here; the test only connects over loopback.
    const url = await run.listening;
    assert.equal(await accepts('127.0.0.2', Number(new URL(url).port)), true);
    const stdout = await stopMain(run);
    assert.match(stdout, /"loopbackOnly":false[^\n]*api\.auth\.enable is false/);
  });

  it('resolves the bind address from the address and the auth switch', () => {
    const config = defaultConfig();
    config.address = ':8080';
    config.api.auth.enable = true;
    assert.deepEqual(resolveBindAddress(config), { host: '0.0.0.0', port: 8080, narrowedToLoopback: false });
    config.api.auth.enable = false;
    assert.deepEqual(resolveBindAddress(config), { host: '127.0.0.1', port: 8080, narrowedToLoopback: true });
    config.address = '[::]:9000';
    assert.deepEqual(resolveBindAddress(config), { host: '::', port: 9000, narrowedToLoopback: false });
  });
});

async function mkdirp(path: string): Promise<string> {
  await mkdir(path, { recursive: true });
  return path;
}
