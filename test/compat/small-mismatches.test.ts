import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

/** Requests the Restreamer UI and core-client-go make, as they make them. */
describe('client requests the reference answers and streamcore must too', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it("HEAD of a missing file answers the status alone, like the reference (the UI's DataHasFile, MemFSHasFile)", async () => {
    for (const path of [
      '/api/v3/fs/disk/playersite/missing.html',
      '/api/v3/fs/mem/missing.ts',
      '/api/v3/nothing',
    ]) {
      const response = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      assert.equal(response.status, 404, path);
      // The UI reads JSON whenever the content type says so; an empty body would throw there.
      assert.equal(response.headers.get('content-type'), null, path);
      assert.equal(await response.text(), '');
    }
    // GET of the same keeps the envelope.
    const get = await fetch(`${server.url}/api/v3/fs/disk/playersite/missing.html`);
    assert.equal(get.status, 404);
    assert.match(get.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await get.json()) as { code: number }).code, 404);
  });

  it('empty query parameters mean the default (core-client-go sends ?glob=&sort=&order=)', async () => {
    for (const query of ['?glob=&sort=&order=', '?sort=', '?order=', '?glob=/*&sort=name&order=']) {
      const response = await fetch(`${server.url}/api/v3/fs/disk${query}`);
      assert.equal(response.status, 200, query);
      assert.ok(Array.isArray(await response.json()), query);
    }
    assert.equal((await fetch(`${server.url}/api/v3/fs/disk?sort=bogus`)).status, 400);
  });
});
