import assert from 'node:assert/strict';
import { access, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from './raw-request.js';

const SECRET = 'TOP-SECRET-OUTSIDE-THE-MOUNT';

describe('no way out of the mounts', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
    // The data dir is <dir>/data; the secret lives beside it, one level up.
    await writeFile(join(server.dir, 'secret.txt'), SECRET);
    const data = server.config.storage.disk.dir;
    await mkdir(join(data, 'a', 'b'), { recursive: true });
    await writeFile(join(data, 'a', 'inside.txt'), 'inside');
    await symlink(join(server.dir, 'secret.txt'), join(data, 'link-to-secret.txt'));
    await symlink(server.dir, join(data, 'link-to-parent'));
    await symlink(join(data, 'a', 'inside.txt'), join(data, 'link-inside.txt'));
  });
  after(() => server.close());

  const reads = [
    '/../secret.txt',
    '/a/../../secret.txt',
    '/a/b/../../../secret.txt',
    '/%2e%2e/secret.txt',
    '/%2E%2E/secret.txt',
    '/..%2fsecret.txt',
    '/%2e%2e%2fsecret.txt',
    '/a/%2e%2e/%2e%2e/secret.txt',
    '/.%2e/secret.txt',
    '//../secret.txt',
    '/./../secret.txt',
    '/%252e%252e/secret.txt',
    '/..%5csecret.txt',
    '/..\\secret.txt',
    '/a/..%00/secret.txt',
    '/link-to-secret.txt',
    '/link-to-parent/secret.txt',
    '/link-to-parent/',
    '/memfs/../secret.txt',
    '/memfs/%2e%2e/secret.txt',
    '/memfs/..%2f..%2fsecret.txt',
    '/api/v3/fs/disk/../secret.txt',
    '/api/v3/fs/disk/%2e%2e/secret.txt',
    '/api/v3/fs/disk/a/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/api/v3/fs/disk/link-to-secret.txt',
    '/api/v3/fs/disk/link-to-parent/secret.txt',
    '/api/v3/fs/mem/../../secret.txt',
  ];
  for (const path of reads) {
    it(`GET ${path} is a 404 and never shows the file`, async () => {
      const response = await rawRequest(server.url, path);
      assert.equal(response.status, 404, `${path} → ${response.status}`);
      assert.ok(!response.body.toString('latin1').includes(SECRET));
    });
  }

  it('refuses a malformed percent-encoding before any file access', async () => {
    // The router rejects invalid UTF-8 in the path itself (400), so no mount code runs.
    const response = await rawRequest(server.url, '/%c0%ae%c0%ae/secret.txt');
    assert.ok([400, 404].includes(response.status), String(response.status));
    assert.ok(!response.body.toString('latin1').includes(SECRET));
  });

  it('still serves files inside, including a symlink that stays inside', async () => {
    assert.equal((await rawRequest(server.url, '/a/inside.txt')).body.toString(), 'inside');
    assert.equal((await rawRequest(server.url, '/link-inside.txt')).body.toString(), 'inside');
    // Any `..` segment is refused, even one that would stay inside (browsers never send one).
    assert.equal((await rawRequest(server.url, '/a/b/../inside.txt')).status, 404);
  });

  const writes: [string, string][] = [
    ['PUT', '/memfs/../escape.txt'],
    ['PUT', '/memfs/%2e%2e/escape.txt'],
    ['PUT', '/api/v3/fs/disk/../escape.txt'],
    ['PUT', '/api/v3/fs/disk/%2e%2e/escape.txt'],
    ['PUT', '/api/v3/fs/disk/link-to-parent/escape.txt'],
    ['PUT', '/api/v3/fs/disk/link-to-secret.txt'],
    ['DELETE', '/api/v3/fs/disk/link-to-parent/secret.txt'],
    ['DELETE', '/api/v3/fs/disk/%2e%2e/secret.txt'],
  ];
  for (const [method, path] of writes) {
    it(`${method} ${path} touches nothing outside`, async () => {
      const response = await rawRequest(server.url, path, {
        method,
        body: method === 'PUT' ? 'escaped' : undefined,
      });
      assert.equal(response.status, 404, `${path} → ${response.status}`);
      await assert.rejects(access(join(server.dir, 'escape.txt')));
      await access(join(server.dir, 'secret.txt'));
    });
  }

  it('creates no directory outside through a symlinked directory', async () => {
    const response = await rawRequest(server.url, '/api/v3/fs/disk/link-to-parent/newdir/sub/escape.txt', {
      method: 'PUT',
      body: 'escaped',
    });
    assert.equal(response.status, 404);
    await assert.rejects(access(join(server.dir, 'newdir')));
  });
});
