import assert from 'node:assert/strict';
import { access, lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from './raw-request.js';

describe('DELETE of a symlink in the disk filesystem', () => {
  let server: TestServer;
  let data: string;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
    data = server.config.storage.disk.dir;
    await mkdir(join(data, 'a'), { recursive: true });
    await writeFile(join(data, 'a', 'target.txt'), 'target');
    await writeFile(join(server.dir, 'outside.txt'), 'outside');
    await symlink(join(data, 'a', 'target.txt'), join(data, 'link-inside.txt'));
    await symlink(join(server.dir, 'outside.txt'), join(data, 'link-outside.txt'));
    await symlink(join(data, 'missing.txt'), join(data, 'dangling.txt'));
  });
  after(() => server.close());

  for (const name of ['link-inside.txt', 'link-outside.txt', 'dangling.txt']) {
    it(`removes ${name} itself and leaves its target alone`, async () => {
      const answer = await rawRequest(server.url, `/api/v3/fs/disk/${name}`, { method: 'DELETE' });
      assert.equal(answer.status, 200, answer.body.toString());
      await assert.rejects(lstat(join(data, name)), 'the link is gone');
      assert.equal(await readFile(join(data, 'a', 'target.txt'), 'utf8'), 'target');
      assert.equal(await readFile(join(server.dir, 'outside.txt'), 'utf8'), 'outside');
    });
  }

  it('does not remove a directory, nor follow a symlinked directory above the name', async () => {
    await symlink(server.dir, join(data, 'link-to-parent'));
    let answer = await rawRequest(server.url, '/api/v3/fs/disk/a', { method: 'DELETE' });
    assert.equal(answer.status, 404);
    answer = await rawRequest(server.url, '/api/v3/fs/disk/link-to-parent/outside.txt', {
      method: 'DELETE',
    });
    assert.equal(answer.status, 404);
    await access(join(server.dir, 'outside.txt'));
    await access(join(data, 'a', 'target.txt'));
  });
});

describe('over-long file names', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
  });
  after(() => server.close());

  const long = 'n'.repeat(300);
  const cases: [string, string][] = [
    ['PUT', `/api/v3/fs/disk/${long}.txt`],
    ['PUT', `/api/v3/fs/disk/${long}/x.txt`],
    ['PUT', `/api/v3/fs/mem/${long}.txt`],
    ['PUT', `/memfs/${long}.txt`],
    ['PUT', `/memfs/${'d'.repeat(200)}/`.repeat(6) + 'x.txt'],
    ['PUT', `/api/v3/fs/disk/${'é'.repeat(200)}.txt`],
  ];
  for (const [method, path] of cases) {
    it(`${method} ${path.slice(0, 40)}… (${path.length} characters) answers 400 naming the limit`, async () => {
      const answer = await rawRequest(server.url, encodeURI(path), { method, body: 'x' });
      assert.equal(answer.status, 400, answer.body.toString());
      const envelope = JSON.parse(answer.body.toString()) as { code: number; details: string[] };
      assert.equal(envelope.code, 400);
      assert.match(envelope.details.join(' '), /longer than (255|1024)/);
    });
  }

  for (const path of [`/api/v3/fs/disk/${long}.txt`, `/${long}.txt`, `/memfs/${long}.txt`]) {
    it(`GET and DELETE ${path.slice(0, 30)}… answer 404`, async () => {
      assert.equal((await rawRequest(server.url, path)).status, 404);
      if (!path.startsWith('/api/') && !path.startsWith('/memfs/')) return;
      assert.equal((await rawRequest(server.url, path, { method: 'DELETE' })).status, 404);
    });
  }

  it('still takes a 255-byte name', async () => {
    const answer = await rawRequest(server.url, `/api/v3/fs/disk/${'m'.repeat(251)}.txt`, {
      method: 'PUT',
      body: 'x',
    });
    assert.equal(answer.status, 201);
  });
});
