import assert from 'node:assert/strict';
import { readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

interface FileInfoDto {
  name: string;
  size_bytes: number;
  last_modified: number;
}

describe('/api/v3/fs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const api = (path: string, init?: RequestInit): Promise<Response> =>
    fetch(`${server.url}/api/v3/fs${path}`, init);

  it('lists the two filesystems', async () => {
    const response = await api('');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await response.json(), [
      { name: 'disk', type: 'disk', mount: '/' },
      { name: 'mem', type: 'mem', mount: '/memfs' },
    ]);
  });

  it('writes, reads and deletes a memfs file without basic auth, visible on the mount', async () => {
    let response = await api('/mem/dir/one.txt', {
      method: 'PUT',
      body: 'one',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 201);
    response = await api('/mem/dir/one.txt', { method: 'PUT', body: 'one!' });
    assert.equal(response.status, 204);
    response = await api('/mem/dir/one.txt');
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await response.text(), 'one!');
    assert.equal(await (await fetch(`${server.url}/memfs/dir/one.txt`)).text(), 'one!');
    response = await api('/mem/dir/one.txt', { method: 'DELETE' });
    assert.equal(response.status, 200);
    response = await api('/mem/dir/one.txt');
    assert.equal(response.status, 404);
    assert.deepEqual(await response.json(), {
      code: 404,
      message: 'File not found',
      details: ['/dir/one.txt'],
    });
    assert.equal((await api('/mem/dir/one.txt', { method: 'DELETE' })).status, 404);
  });

  it('writes into the disk directory, creating parent directories', async () => {
    const response = await api('/disk/up/load.txt', { method: 'PUT', body: 'on disk' });
    assert.equal(response.status, 201);
    assert.equal(await readFile(join(server.config.storage.disk.dir, 'up', 'load.txt'), 'utf8'), 'on disk');
    assert.equal(await (await fetch(`${server.url}/up/load.txt`)).text(), 'on disk');
    assert.equal((await api('/disk/up/load.txt', { method: 'DELETE' })).status, 200);
    assert.equal((await fetch(`${server.url}/up/load.txt`)).status, 404);
  });

  it('answers 409 with the envelope for a path below a file, and keeps serving', async () => {
    assert.equal((await api('/disk/plain.txt', { method: 'PUT', body: 'a file' })).status, 201);
    const response = await api('/disk/plain.txt/below.txt', { method: 'PUT', body: 'x' });
    assert.equal(response.status, 409);
    const body = (await response.json()) as { code: number; details: string[] };
    assert.equal(body.code, 409);
    assert.match(body.details[0] ?? '', /\/plain\.txt is a file/);
    assert.equal(await (await fetch(`${server.url}/plain.txt`)).text(), 'a file');
  });

  it('lists files with glob, sort and order', async () => {
    const dir = server.config.storage.disk.dir;
    const files: [string, number, number][] = [
      ['b.ts', 30, 1_700_000_300],
      ['a.ts', 10, 1_700_000_200],
      ['c.ts', 20, 1_700_000_100],
      ['x.m3u8', 5, 1_700_000_000],
    ];
    for (const [name, size, mtime] of files) {
      await writeFile(join(dir, name), Buffer.alloc(size));
      await utimes(join(dir, name), mtime, mtime);
    }
    const list = async (query: string): Promise<FileInfoDto[]> => {
      const response = await api(`/disk?${query}`);
      assert.equal(response.status, 200, query);
      return (await response.json()) as FileInfoDto[];
    };
    const names = (entries: FileInfoDto[]): string[] => entries.map((entry) => entry.name);
    assert.deepEqual(names(await list('glob=/*.ts&sort=name')), ['/a.ts', '/b.ts', '/c.ts']);
    assert.deepEqual(names(await list('glob=/*.ts&sort=name&order=desc')), ['/c.ts', '/b.ts', '/a.ts']);
    assert.deepEqual(names(await list('glob=/*.ts&sort=size')), ['/a.ts', '/c.ts', '/b.ts']);
    assert.deepEqual(names(await list('glob=/*.ts&sort=lastmod&order=desc')), ['/b.ts', '/a.ts', '/c.ts']);
    assert.deepEqual(
      names(await list('glob=/*.ts')),
      ['/c.ts', '/a.ts', '/b.ts'],
      'default: by last modification',
    );
    const [entry] = await list('glob=/x.m3u8');
    assert.deepEqual(entry, { name: '/x.m3u8', size_bytes: 5, last_modified: 1_700_000_000 });
  });

  it('rejects an unknown sort or order with 400 naming the parameter', async () => {
    let response = await api('/disk?sort=color');
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { details: string[] }).details[0] ?? '', /^sort:/);
    response = await api('/mem?order=up');
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { details: string[] }).details[0] ?? '', /^order:/);
  });

  it('answers 404 for an unknown filesystem', async () => {
    for (const path of ['/tape', '/tape/file.ts']) {
      const response = await api(path);
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as { code: number }).code, 404);
    }
  });
});

describe('/api/v3/fs disk limit', () => {
  it('enforces storage.disk.max_size_mbytes on writes through the server (413, 507)', async () => {
    const server = await startServer({ config: { storage: { disk: { max_size_mbytes: 1 } } } });
    try {
      const put = (path: string, size: number): Promise<Response> =>
        fetch(`${server.url}/api/v3/fs/disk${path}`, { method: 'PUT', body: Buffer.alloc(size) });
      assert.equal((await put('/too-big.bin', 1024 * 1024 + 1)).status, 413);
      assert.equal((await put('/a.bin', 700_000)).status, 201);
      const response = await put('/b.bin', 700_000);
      assert.equal(response.status, 507);
      assert.equal(((await response.json()) as { code: number }).code, 507);
      assert.equal((await put('/a.bin', 900_000)).status, 204, 'an overwrite only needs the difference');
    } finally {
      await server.close();
    }
  });
});

describe('/api/v3/fs behind the guard', () => {
  it('needs a token when auth is enabled; the mounts do not', async () => {
    const server = await startServer({
      config: { api: { auth: { enable: true, username: 'u', password: 'p' } } },
    });
    try {
      let response = await fetch(`${server.url}/api/v3/fs`);
      assert.equal(response.status, 401);
      response = await fetch(`${server.url}/api/v3/fs/mem/x.txt`, { method: 'PUT', body: 'x' });
      assert.equal(response.status, 401);
      const login = await fetch(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'u', password: 'p' }),
      });
      assert.equal(login.status, 200);
      const { access_token } = (await login.json()) as { access_token: string };
      response = await fetch(`${server.url}/api/v3/fs/mem/x.txt`, {
        method: 'PUT',
        body: 'x',
        headers: { authorization: `Bearer ${access_token}` },
      });
      assert.equal(response.status, 201);
      response = await fetch(`${server.url}/memfs/x.txt`);
      assert.equal(response.status, 200);
    } finally {
      await server.close();
    }
  });
});
