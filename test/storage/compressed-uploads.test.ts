import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from './raw-request.js';

describe('compressed uploads are bounded after decoding', () => {
  let server: TestServer;
  const auth = `Basic ${Buffer.from('admin:pw').toString('base64')}`;
  before(async () => {
    server = await startServer({
      config: { api: { max_body_kbytes: 64 }, storage: { memory: { auth: { password: 'pw' } } } },
    });
  });
  after(() => server.close());

  const targets = ['/memfs/bomb.bin', '/api/v3/fs/mem/bomb.bin', '/api/v3/fs/disk/bomb.bin'];
  for (const path of targets) {
    it(`PUT ${path}: a small gzip body that decodes past api.max_body_kbytes is 413, and nothing is stored`, async () => {
      const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
      assert.ok(bomb.length < 20_000, `${bomb.length} bytes encoded`);
      const answer = await rawRequest(server.url, path, {
        method: 'PUT',
        body: bomb,
        headers: {
          authorization: auth,
          'content-encoding': 'gzip',
          'content-type': 'application/octet-stream',
        },
      });
      assert.equal(answer.status, 413, answer.body.toString());
      const envelope = JSON.parse(answer.body.toString()) as { code: number; details: string[] };
      assert.match(envelope.details.join(' '), /api\.max_body_kbytes/);
      const read = await rawRequest(server.url, path.replace('/api/v3/fs/disk', ''));
      assert.equal(read.status, 404);
    });

    it(`PUT ${path}: a gzip body within the bound is stored decoded`, async () => {
      const content = Buffer.alloc(32 * 1024, 'a');
      const answer = await rawRequest(server.url, path.replace('bomb', 'small'), {
        method: 'PUT',
        body: gzipSync(content),
        headers: {
          authorization: auth,
          'content-encoding': 'gzip',
          'content-type': 'application/octet-stream',
        },
      });
      assert.ok([201, 204].includes(answer.status), `${answer.status} ${answer.body.toString()}`);
      const read = await rawRequest(server.url, path.replace('bomb', 'small'), {
        headers: { authorization: auth },
      });
      assert.deepEqual(read.body, content);
    });
  }

  it('leaves plain uploads to the filesystem limit', async () => {
    const answer = await rawRequest(server.url, '/memfs/plain.bin', {
      method: 'PUT',
      body: Buffer.alloc(1024 * 1024),
      headers: { authorization: auth },
    });
    assert.equal(answer.status, 201);
  });
});
