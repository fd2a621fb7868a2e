import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { call, ok } from '../process/support.js';

interface ConfigAnswer {
  config: Record<string, unknown> & { address: string; rtmp: { address: string } };
  overrides: string[];
}

/**
 * Keys an env var sets (listed in `overrides`) and what a PUT may do with them. Found in the
 * Restreamer UI walk-through (docs/restreamer-ui.md): its Settings keep only the port of an
 * address (`'127.0.0.1:18090'.split(':').join('')`) and send `':' + port` back, here
 * `:127.0.0.118090`. With the address in the env, that value was checked with the env's in its
 * place, written to the file, and would have stopped the next start without the env var.
 */
describe('config API: keys set by env vars', () => {
  let server: TestServer;
  let configFile: string;
  before(async () => {
    server = await startServer({ env: { CORE_ADDRESS: '127.0.0.1:0' } });
    configFile = join(server.dir, 'config.json');
  });
  after(() => server.close());

  it("refuses a value that is neither the env's nor the file's, naming the key, and writes nothing", async () => {
    const shown = await ok<ConfigAnswer>(server, 'GET', '/config');
    assert.ok(shown.overrides.includes('address'));
    const before = await readFile(configFile, 'utf8');
    // What the UI sends after its port-only edit of a host-bound address.
    const answer = await call<{ code: number; details: string[] }>(server, 'PUT', '/config', {
      ...shown.config,
      address: `:${shown.config.address.split(':').join('')}`,
    });
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(answer.body.details, [
      'address: set by an environment variable, which wins over the file; change it there',
    ]);
    assert.equal(await readFile(configFile, 'utf8'), before);
  });

  it("takes the env's value or the file's own back unchanged (core-client-go sends what it got)", async () => {
    const shown = await ok<ConfigAnswer>(server, 'GET', '/config');
    assert.equal(await ok(server, 'PUT', '/config', shown.config), 'OK');
    const file = JSON.parse(await readFile(configFile, 'utf8')) as { address: string };
    assert.equal(await ok(server, 'PUT', '/config', { ...shown.config, address: file.address }), 'OK');
    // The UI leaves overridden keys out of its PUT: the file keeps its own.
    const withoutAddress: Record<string, unknown> = { ...shown.config };
    delete withoutAddress.address;
    assert.equal(await ok(server, 'PUT', '/config', withoutAddress), 'OK');
    assert.equal(
      (JSON.parse(await readFile(configFile, 'utf8')) as { address: string }).address,
      file.address,
    );
  });
});
