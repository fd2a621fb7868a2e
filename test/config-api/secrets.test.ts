import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getPath } from '../../src/config/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

interface ConfigAnswer {
  config: Record<string, unknown>;
  overrides: string[];
}

const FILE_SECRET = 'jwt-secret-from-the-file-0123456789';
const ENV_SECRET = 'jwt-secret-from-the-env-9876543210';
const PASSWORD = 'api-password-4711';

async function fileJson(server: TestServer): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(server.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
}

async function getConfigText(server: TestServer, token?: string): Promise<string> {
  const response = await fetch(`${server.url}/api/v3/config`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200);
  return response.text();
}

/**
 * What `GET /api/v3/config` gives away (docs/security.md, "What the config API cannot do"): never
 * the JWT secret (who has it makes tokens), never the API password; the memfs password, which the
 * Restreamer UI needs for the HLS push address and which opens nothing a token does not.
 */
describe('config API: secrets', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        api: { auth: { jwt: { secret: FILE_SECRET }, username: 'admin', password: PASSWORD } },
        storage: { memory: { auth: { password: 'memfs-password-1234' } } },
      },
    });
  });
  after(() => server.close());

  it('never answers the JWT secret or the API password, and keeps both when they come back empty', async () => {
    const text = await getConfigText(server);
    assert.ok(!text.includes(FILE_SECRET), 'no JWT secret anywhere in the answer');
    assert.ok(!text.includes(PASSWORD), 'no API password anywhere in the answer');
    const { config } = JSON.parse(text) as ConfigAnswer;
    assert.equal(getPath(config, 'api.auth.jwt.secret'), '');
    assert.equal(getPath(config, 'api.auth.password'), '');
    assert.equal(getPath(config, 'storage.memory.auth.password'), 'memfs-password-1234');

    // A client that sends back what it read, or leaves them out, keeps both.
    assert.equal(await ok(server, 'PUT', '/config', { ...config, name: 'echoed' }), 'OK');
    let file = await fileJson(server);
    assert.equal(getPath(file, 'api.auth.jwt.secret'), FILE_SECRET);
    assert.equal(getPath(file, 'api.auth.password'), PASSWORD);
    assert.equal(getPath(file, 'name'), 'echoed');
    assert.equal(await ok(server, 'PUT', '/config', { version: 3, api: { auth: { enable: false } } }), 'OK');
    file = await fileJson(server);
    assert.equal(getPath(file, 'api.auth.jwt.secret'), FILE_SECRET);
    assert.equal(getPath(file, 'api.auth.password'), PASSWORD);
  });

  it('refuses a JWT secret chosen by a client (400, the key), stores nothing; takes a new API password', async () => {
    const before = await readFile(join(server.dir, 'config.json'), 'utf8');
    const answer = await call<{ details: string[] }>(server, 'PUT', '/config', {
      version: 3,
      api: { auth: { jwt: { secret: 'chosen-by-the-token-holder' } } },
    });
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(answer.body.details, [
      'api.auth.jwt.secret: can only be changed in the config file on the server, it signs every token: whoever chooses it can make tokens of their own',
    ]);
    assert.ok(!answer.text.includes('chosen-by-the-token-holder'));
    assert.equal(await readFile(join(server.dir, 'config.json'), 'utf8'), before);
    const changed = { version: 3, api: { auth: { password: 'a-new-password-42' } } };
    assert.equal(await ok(server, 'PUT', '/config', changed), 'OK');
    assert.equal(getPath(await fileJson(server), 'api.auth.password'), 'a-new-password-42');
    assert.equal(getPath((await ok<ConfigAnswer>(server, 'GET', '/config')).config, 'api.auth.password'), '');
  });
});

describe('config API: secrets set by env vars', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      env: { CORE_API_AUTH_JWT_SECRET: ENV_SECRET, CORE_API_AUTH_PASSWORD: 'env-password-0815' },
      config: { api: { auth: { enable: true, username: 'admin', jwt: { secret: FILE_SECRET } } } },
    });
  });
  after(() => server.close());

  async function login(password: string): Promise<{ access_token: string; refresh_token: string }> {
    const response = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    assert.equal(response.status, 200);
    return (await response.json()) as { access_token: string; refresh_token: string };
  }

  it('answers neither, and an echo keeps the file and the tokens the env secret signed', async () => {
    const token = (await login('env-password-0815')).access_token;
    const text = await getConfigText(server, token);
    for (const secret of [ENV_SECRET, FILE_SECRET, 'env-password-0815']) {
      assert.ok(!text.includes(secret), 'no secret in the answer');
    }
    const shown = JSON.parse(text) as ConfigAnswer;
    assert.ok(shown.overrides.includes('api.auth.jwt.secret'));
    const put = await fetch(`${server.url}/api/v3/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(shown.config),
    });
    assert.equal(put.status, 200, await put.text());
    const file = await fileJson(server);
    assert.equal(getPath(file, 'api.auth.jwt.secret'), FILE_SECRET);
    assert.equal(getPath(file, 'api.auth.password'), undefined, 'the env password is not written');
    const reload = await fetch(`${server.url}/api/v3/config/reload`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(reload.status, 200, await reload.text());
    // Nothing changed, so the token is still good.
    const again = await fetch(`${server.url}/api/v3/process`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(again.status, 200);
  });
});
