import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call } from '../process/support.js';

interface Envelope {
  details: string[];
}

/**
 * The config API cannot open the server to the network (issue 24 item 6): a change that would
 * serve the API without authentication on an address beyond loopback is refused, naming the key.
 * `:port` binds loopback while authentication is off (src/config/bind-address.ts), so it passes.
 */
describe('config API: no unprotected API on the network', () => {
  let server: TestServer;
  let configFile: string;
  before(async () => {
    server = await startServer();
    configFile = join(server.dir, 'config.json');
  });
  after(() => server.close());

  it('refuses an address beyond loopback while authentication is off (400, address), takes loopback ones', async () => {
    const before = await readFile(configFile, 'utf8');
    for (const address of ['0.0.0.0:18080', '[::]:18080', 'example.com:18080', '192.0.2.1:80']) {
      const answer = await call<Envelope>(server, 'PUT', '/config', {
        version: 3,
        address,
        api: { auth: { enable: false } },
      });
      assert.equal(answer.status, 400, `${address}: ${answer.text}`);
      assert.equal(answer.body.details.length, 1, answer.text);
      assert.match(
        answer.body.details[0] ?? '',
        /^address: .* listens beyond loopback while api\.auth\.enable is false/,
      );
    }
    assert.equal(await readFile(configFile, 'utf8'), before);
    // Loopback addresses, and `:port` (loopback while authentication is off), pass.
    for (const address of [':0', '127.0.0.1:0', '127.0.0.2:0', '[::1]:0', 'localhost:0']) {
      const answer = await call(server, 'PUT', '/config', { version: 3, address });
      assert.equal(answer.status, 200, `${address}: ${answer.text}`);
    }
  });

  it('takes 0.0.0.0 with authentication on, and then refuses turning it off (400, api.auth.enable)', async () => {
    const on = await call(server, 'PUT', '/config', {
      version: 3,
      address: '0.0.0.0:0',
      api: { auth: { enable: true, username: 'admin', password: 'a-password-0815' } },
    });
    assert.equal(on.status, 200, on.text);
    const before = await readFile(configFile, 'utf8');
    const off = await call<Envelope>(server, 'PUT', '/config', {
      version: 3,
      api: { auth: { enable: false } },
    });
    assert.equal(off.status, 400, off.text);
    assert.match(
      off.body.details[0] ?? '',
      /^api\.auth\.enable: must stay true while address "0\.0\.0\.0:0" listens beyond loopback/,
    );
    assert.equal(await readFile(configFile, 'utf8'), before);
    // Both at once: loopback again and authentication off.
    const back = await call(server, 'PUT', '/config', {
      version: 3,
      address: ':0',
      api: { auth: { enable: false } },
    });
    assert.equal(back.status, 200, back.text);
  });
});
