import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from '../auth/support.js';
import { buildIntoTemp } from './support.js';

/** How the server ships the built page (no browser needed). */
describe('dashboard routes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ dashboardDir: await buildIntoTemp() });
    // A file of the same name on the disk filesystem must not be what /dashboard/ serves.
    await mkdir(join(server.config.storage.disk.dir, 'dashboard'), { recursive: true });
    await writeFile(join(server.config.storage.disk.dir, 'dashboard', 'index.html'), 'from disk');
  });
  after(() => server.close());

  it('redirects /dashboard to /dashboard/', async () => {
    const answer = await rawRequest(`${server.url}/dashboard`);
    assert.equal(answer.status, 301);
    assert.equal(answer.headers.location, '/dashboard/');
  });

  it('serves the page with a policy that keeps it on its own origin', async () => {
    const answer = await rawRequest(`${server.url}/dashboard/`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(answer.text, /<script type="module" src="app.js">/);
    assert.doesNotMatch(answer.text, /from disk/);
    const policy = String(answer.headers['content-security-policy']);
    assert.match(policy, /script-src 'self'/);
    assert.match(policy, /connect-src 'self'/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  });

  it('sends the script gzip-encoded to clients that accept it, and 304 for a known ETag', async () => {
    const plain = await rawRequest(`${server.url}/dashboard/app.js`);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
    const gzipped = await rawRequest(`${server.url}/dashboard/app.js`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(gzipped.body).equals(plain.body));
    assert.ok(gzipped.body.length < plain.body.length / 2);
    const again = await rawRequest(`${server.url}/dashboard/app.js`, {
      headers: { 'if-none-match': plain.headers.etag! },
    });
    assert.equal(again.status, 304);
  });

  it('keeps the whole page under its budget of 150 KB gzipped', async () => {
    let total = 0;
    for (const file of ['', 'app.js', 'app.css']) {
      const answer = await rawRequest(`${server.url}/dashboard/${file}`, {
        headers: { 'accept-encoding': 'gzip' },
      });
      assert.equal(answer.status, 200);
      total += answer.body.length;
    }
    assert.ok(total < 150 * 1024, `the page is ${total} bytes gzipped`);
  });

  it('answers a missing file with the envelope', async () => {
    const answer = await rawRequest(`${server.url}/dashboard/nothing.js`);
    assert.equal(answer.status, 404);
    assert.deepEqual(JSON.parse(answer.text), {
      code: 404,
      message: 'File not found',
      details: ['/dashboard/nothing.js'],
    });
    const traversal = await rawRequest(`${server.url}/dashboard/..%2Fconfig.json`);
    assert.equal(traversal.status, 404);
  });

  it('says how to build the page when it was not built', async () => {
    const unbuilt = await startServer({ dashboardDir: await mkdtemp(join(tmpdir(), 'streamcore-unbuilt-')) });
    try {
      const answer = await rawRequest(`${unbuilt.url}/dashboard/`);
      assert.equal(answer.status, 503);
      assert.deepEqual((JSON.parse(answer.text) as { details: string[] }).details, [
        'the dashboard was not built: run npm run build',
      ]);
    } finally {
      await unbuilt.close();
    }
  });
});
