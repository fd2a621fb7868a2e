import assert from 'node:assert/strict';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { authConfig, loginPair } from '../auth/support.js';

describe('disk mount /', () => {
  let server: TestServer;
  let data: string;
  const modified = new Date('2024-05-01T12:00:00Z');
  before(async () => {
    server = await startServer();
    data = server.config.storage.disk.dir;
    await mkdir(join(data, 'site', 'sub'), { recursive: true });
    await writeFile(join(data, 'site', 'index.html'), '<h1>site</h1>');
    await writeFile(join(data, 'site', 'sub', 'page.txt'), 'page text');
    await writeFile(join(data, 'clip.mp4'), Buffer.alloc(5000, 7));
    await writeFile(join(data, 'live.m3u8'), '#EXTM3U\n');
    await writeFile(join(data, 'seg.ts'), Buffer.alloc(100, 1));
    await writeFile(join(data, 'img.png'), Buffer.alloc(10));
    await writeFile(join(data, 'a.json'), '{"a":1}');
    await writeFile(join(data, 'b.jpg'), Buffer.alloc(10));
    await utimes(join(data, 'clip.mp4'), modified, modified);
  });
  after(() => server.close());

  it('serves files with content type, Last-Modified and Content-Length', async () => {
    const types: [string, string][] = [
      ['/clip.mp4', 'video/mp4'],
      ['/live.m3u8', 'application/vnd.apple.mpegurl'],
      ['/seg.ts', 'video/MP2T'],
      ['/img.png', 'image/png'],
      ['/a.json', 'application/json; charset=utf-8'],
      ['/b.jpg', 'image/jpeg'],
      ['/site/sub/page.txt', 'text/plain; charset=utf-8'],
    ];
    for (const [path, type] of types) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), type, path);
      const length = (await response.arrayBuffer()).byteLength;
      assert.equal(Number(response.headers.get('content-length')), length, path);
    }
    const response = await fetch(`${server.url}/clip.mp4`);
    assert.equal(response.headers.get('last-modified'), modified.toUTCString());
  });

  it('serves a directory as its index.html, with or without the trailing slash', async () => {
    for (const path of ['/site/', '/site']) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(await response.text(), '<h1>site</h1>');
    }
    const response = await fetch(`${server.url}/site/sub/`);
    assert.equal(response.status, 404, 'a directory without index.html is not listed');
  });

  it('answers HEAD, ranges and If-Modified-Since', async () => {
    let response = await fetch(`${server.url}/clip.mp4`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), '5000');
    assert.equal((await response.arrayBuffer()).byteLength, 0);
    response = await fetch(`${server.url}/clip.mp4`, { headers: { range: 'bytes=1000-199999' } });
    assert.equal(response.status, 206);
    assert.equal(response.headers.get('content-range'), 'bytes 1000-4999/5000');
    assert.equal((await response.arrayBuffer()).byteLength, 4000);
    response = await fetch(`${server.url}/clip.mp4`, {
      headers: { 'if-modified-since': modified.toUTCString() },
    });
    assert.equal(response.status, 304);
    response = await fetch(`${server.url}/clip.mp4`, {
      headers: { 'if-modified-since': new Date(modified.getTime() - 5000).toUTCString() },
    });
    assert.equal(response.status, 200);
  });

  it('answers a missing file with the File not found envelope', async () => {
    const response = await fetch(`${server.url}/no/such/file.ts`);
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), {
      code: 404,
      message: 'File not found',
      details: ['/no/such/file.ts'],
    });
  });

  it('leaves /api to the API: an unknown API path is a route 404, a POST to a file path is a 404', async () => {
    let response = await fetch(`${server.url}/api/v3/no-such-route`);
    assert.equal(response.status, 404);
    assert.equal(((await response.json()) as { message: string }).message, 'Not Found');
    response = await fetch(`${server.url}/seg.ts`, { method: 'POST', body: 'x' });
    assert.equal(response.status, 404);
  });

  it('gzips a large text file for clients that accept it, never a segment', async () => {
    await writeFile(join(data, 'big.txt'), 'streamcore '.repeat(1000));
    await writeFile(join(data, 'big.ts'), Buffer.alloc(100_000, 65));
    let response = await fetch(`${server.url}/big.txt`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(response.headers.get('content-encoding'), 'gzip');
    assert.equal((await response.text()).length, 11_000);
    response = await fetch(`${server.url}/big.ts`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(response.headers.get('content-encoding'), null);
    assert.equal((await response.arrayBuffer()).byteLength, 100_000);
  });

  it('sends the configured CORS origin', async () => {
    const response = await fetch(`${server.url}/seg.ts`, { headers: { origin: 'http://player.test' } });
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  });
});

describe('disk mount with restricted CORS origins', () => {
  it('allows only the configured origins', async () => {
    // With authentication on: with it off, no other origin may use the API (test/http/local-only.test.ts).
    const server = await startServer({
      config: { ...authConfig(), storage: { cors: { origins: ['http://player.test'] } } },
    });
    try {
      const { access_token: token } = await loginPair(server.url);
      await writeFile(join(server.config.storage.disk.dir, 'x.ts'), 'x');
      let response = await fetch(`${server.url}/x.ts`, { headers: { origin: 'http://player.test' } });
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://player.test');
      response = await fetch(`${server.url}/x.ts`, { headers: { origin: 'http://evil.test' } });
      assert.equal(response.headers.get('access-control-allow-origin'), null);
      // The answer depends on Origin, and caches must keep the other reasons it varies too.
      response = await fetch(`${server.url}/api/v3/metrics`, {
        headers: { origin: 'http://player.test', authorization: `Bearer ${token}` },
      });
      assert.equal(response.status, 200);
      assert.deepEqual(
        response.headers
          .get('vary')
          ?.split(',')
          .map((field) => field.trim()),
        ['Origin', 'Accept-Encoding'],
      );
      for (const [origin, allowed] of [
        ['http://player.test', 'http://player.test'],
        ['http://evil.test', null],
      ] as const) {
        response = await fetch(`${server.url}/api/v3/process`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST' },
        });
        assert.equal(response.status, 204);
        assert.equal(response.headers.get('access-control-allow-origin'), allowed);
        assert.equal(response.headers.get('access-control-allow-methods') !== null, allowed !== null);
      }
    } finally {
      await server.close();
    }
  });
});
