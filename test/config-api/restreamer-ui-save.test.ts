import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getPath, setPath } from '../../src/config/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok } from '../process/support.js';
import { uiSettingsSave, type Layout } from './ui-settings.js';

describe("config API: the Restreamer UI's Settings save", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      // `:port`, as the UI writes addresses; with authentication off it binds loopback.
      config: {
        address: ':0',
        api: {
          auth: { username: 'admin', password: 'api-password-4711', jwt: { secret: 'file-jwt-secret-1234' } },
        },
      },
      env: { CORE_RTMP_TOKEN: 'rtmp-token-from-env' },
    });
  });
  after(() => server.close());

  it('changes the one field it edited, and no secret', async () => {
    const file = join(server.dir, 'config.json');
    const before = JSON.parse(await readFile(file, 'utf8')) as Layout;
    const answer = await ok<{ config: Layout; overrides: string[] }>(server, 'GET', '/config');
    // What the screen holds: no JWT secret and no API password (an empty field keeps it).
    for (const secret of ['file-jwt-secret-1234', 'api-password-4711']) {
      assert.ok(!JSON.stringify(answer).includes(secret));
    }
    const body = uiSettingsSave(answer, (form) => {
      setPath(form, 'storage.memory.max_size_mbytes', '64');
    });
    assert.equal(await ok(server, 'PUT', '/config', body), 'OK');

    const after = JSON.parse(await readFile(file, 'utf8')) as Layout;
    assert.equal(getPath(after, 'storage.memory.max_size_mbytes'), 64);
    for (const path of [
      'api.auth.jwt.secret',
      'api.auth.password',
      'storage.memory.auth.password',
      'rtmp.token',
    ]) {
      assert.deepEqual(getPath(after, path), getPath(before, path), path);
    }
    assert.equal(getPath(after, 'api.auth.jwt.secret'), 'file-jwt-secret-1234');
    assert.equal(getPath(after, 'api.auth.password'), 'api-password-4711');
    assert.equal(after.address, ':0');
    // The next Settings screen shows the same memfs password (the HLS push address needs it).
    const again = await ok<{ config: Layout }>(server, 'GET', '/config');
    assert.equal(
      getPath(again.config, 'storage.memory.auth.password'),
      server.config.storage.memory.auth.password,
    );
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
  });
});
