import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

const MIB = 1024 * 1024;

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('memfs mount /memfs/', () => {
  let server: TestServer;
  let auth: string;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { auth: { password: 'pw' } } } } });
    auth = basic('admin', 'pw');
  });
  after(() => server.close());

  const put = (
    path: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
  ): Promise<Response> =>
    fetch(`${server.url}/memfs${path}`, {
      method: 'PUT',
      body,
      headers: { authorization: auth, ...headers },
    });

  it('PUT stores a new file with 201 and Content-Location, an overwrite with 204', async () => {
    let response = await put('/live/a.ts', 'first');
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('content-location'), '/memfs/live/a.ts');
    response = await put('/live/a.ts', 'second version', { 'content-type': 'application/json' });
    assert.equal(response.status, 204);
    response = await fetch(`${server.url}/memfs/live/a.ts`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'second version');
  });

  it('POST stores like PUT', async () => {
    const response = await fetch(`${server.url}/memfs/posted.txt`, {
      method: 'POST',
      body: 'via post',
      headers: { authorization: auth },
    });
    assert.equal(response.status, 201);
    assert.equal(await (await fetch(`${server.url}/memfs/posted.txt`)).text(), 'via post');
  });

  it('GET answers content type by extension, Last-Modified and Content-Length', async () => {
    await put('/pl.m3u8', '#EXTM3U\n');
    const types: [string, string][] = [
      ['/pl.m3u8', 'application/vnd.apple.mpegurl'],
      ['/live/a.ts', 'video/MP2T'],
      ['/posted.txt', 'text/plain; charset=utf-8'],
    ];
    for (const [path, type] of types) {
      const response = await fetch(`${server.url}/memfs${path}`);
      assert.equal(response.headers.get('content-type'), type, path);
      assert.ok(!Number.isNaN(Date.parse(response.headers.get('last-modified') ?? '')));
      assert.equal(Number(response.headers.get('content-length')), (await response.arrayBuffer()).byteLength);
    }
  });

  it('HEAD answers the headers without a body', async () => {
    const response = await fetch(`${server.url}/memfs/live/a.ts`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), '14');
    assert.equal(response.headers.get('content-type'), 'video/MP2T');
    assert.equal((await response.arrayBuffer()).byteLength, 0);
  });

  it('serves byte ranges with 206 and refuses ranges outside the file with 416', async () => {
    let response = await fetch(`${server.url}/memfs/live/a.ts`, { headers: { range: 'bytes=7-13' } });
    assert.equal(response.status, 206);
    assert.equal(response.headers.get('content-range'), 'bytes 7-13/14');
    assert.equal(await response.text(), 'version');
    response = await fetch(`${server.url}/memfs/live/a.ts`, { headers: { range: 'bytes=-3' } });
    assert.equal(await response.text(), 'ion');
    response = await fetch(`${server.url}/memfs/live/a.ts`, { headers: { range: 'bytes=14-' } });
    assert.equal(response.status, 416);
    assert.equal(response.headers.get('content-range'), 'bytes */14');
    assert.equal(((await response.json()) as { code: number }).code, 416);
  });

  it('answers a missing file with the File not found envelope', async () => {
    const response = await fetch(`${server.url}/memfs/nothing.ts`);
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(await response.json(), {
      code: 404,
      message: 'File not found',
      details: ['/nothing.ts'],
    });
  });

  it('refuses writes and deletes without the right credentials with 401 and WWW-Authenticate', async () => {
    const attempts: [string, Record<string, string>][] = [
      ['PUT', {}],
      ['PUT', { authorization: basic('admin', 'wrong') }],
      ['PUT', { authorization: basic('root', 'pw') }],
      ['POST', { authorization: 'Bearer pw' }],
      ['DELETE', {}],
    ];
    for (const [method, headers] of attempts) {
      const response = await fetch(`${server.url}/memfs/live/a.ts`, {
        method,
        headers,
        body: method === 'DELETE' ? undefined : 'x',
      });
      assert.equal(response.status, 401, `${method} ${JSON.stringify(headers)}`);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm=/);
      const body = (await response.json()) as { code: number; details: string[] };
      assert.equal(body.code, 401);
    }
    assert.equal(await (await fetch(`${server.url}/memfs/live/a.ts`)).text(), 'second version');
  });

  it('answers Expect: 100-continue with 401 (no 100) without credentials, with 100 with them', async () => {
    const attempt = (authorization?: string): Promise<{ continued: boolean; status: number }> =>
      new Promise((resolve, reject) => {
        const url = new URL(server.url);
        let continued = false;
        const headers: Record<string, string> = { expect: '100-continue', 'content-length': '4' };
        if (authorization !== undefined) headers.authorization = authorization;
        const req = request({
          host: url.hostname,
          port: url.port,
          method: 'PUT',
          path: '/memfs/expect.txt',
          headers,
        });
        req.on('continue', () => {
          continued = true;
          req.end('body');
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => {
            if (!continued) req.destroy();
            resolve({ continued, status: res.statusCode ?? 0 });
          });
        });
        req.on('error', reject);
        req.flushHeaders();
      });
    assert.deepEqual(await attempt(), { continued: false, status: 401 });
    assert.deepEqual(await attempt(basic('admin', 'nope')), { continued: false, status: 401 });
    assert.deepEqual(await attempt(auth), { continued: true, status: 201 });
    assert.equal(await (await fetch(`${server.url}/memfs/expect.txt`)).text(), 'body');
  });

  it('DELETE removes a file (200), then 404', async () => {
    let response = await fetch(`${server.url}/memfs/posted.txt`, {
      method: 'DELETE',
      headers: { authorization: auth },
    });
    assert.equal(response.status, 200);
    assert.ok((await response.text()).length > 0);
    assert.equal((await fetch(`${server.url}/memfs/posted.txt`)).status, 404);
    response = await fetch(`${server.url}/memfs/posted.txt`, {
      method: 'DELETE',
      headers: { authorization: auth },
    });
    assert.equal(response.status, 404);
  });

  it('keeps a binary body byte for byte', async () => {
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    assert.equal((await put('/bin.ts', bytes)).status, 201);
    const back = Buffer.from(await (await fetch(`${server.url}/memfs/bin.ts`)).arrayBuffer());
    assert.ok(back.equals(bytes));
  });
});

describe('memfs credentials', () => {
  it('generates a password when none is configured, persists it, and accepts it', async () => {
    const server = await startServer();
    try {
      const saved = JSON.parse(await readFile(join(server.dir, 'config.json'), 'utf8')) as {
        storage: { memory: { auth: { password: string } } };
      };
      const { password } = saved.storage.memory.auth;
      const username = server.config.storage.memory.auth.username;
      assert.equal(username, 'admin');
      assert.ok(password.length >= 16);
      assert.equal(password, server.config.storage.memory.auth.password);
      let response = await fetch(`${server.url}/memfs/x.txt`, { method: 'PUT', body: 'x' });
      assert.equal(response.status, 401);
      response = await fetch(`${server.url}/memfs/x.txt`, {
        method: 'PUT',
        body: 'x',
        headers: { authorization: basic(username, password) },
      });
      assert.equal(response.status, 201);
    } finally {
      await server.close();
    }
  });

  it('takes writes without credentials when storage.memory.auth.enable is off', async () => {
    const server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
    try {
      const response = await fetch(`${server.url}/memfs/open.txt`, { method: 'PUT', body: 'x' });
      assert.equal(response.status, 201);
    } finally {
      await server.close();
    }
  });
});

describe('memfs limit', () => {
  it('answers 413 for a file above the limit and 507 when there is no room', async () => {
    const server = await startServer({
      config: { storage: { memory: { auth: { enable: false }, max_size_mbytes: 1, purge: false } } },
    });
    try {
      const at = (path: string, size: number): Promise<Response> =>
        fetch(`${server.url}/memfs${path}`, { method: 'PUT', body: Buffer.alloc(size) });
      let response = await at('/too-big.ts', MIB + 1);
      assert.equal(response.status, 413);
      assert.equal(((await response.json()) as { code: number }).code, 413);
      assert.equal((await at('/a.ts', 600_000)).status, 201);
      response = await at('/b.ts', 600_000);
      assert.equal(response.status, 507);
      const body = (await response.json()) as { code: number; message: string; details: string[] };
      assert.equal(body.code, 507);
      assert.equal(body.details.length, 1);
      assert.equal((await fetch(`${server.url}/memfs/b.ts`)).status, 404);
      assert.equal((await fetch(`${server.url}/memfs/a.ts`)).status, 200);
    } finally {
      await server.close();
    }
  });

  it('deletes the oldest files to make room when purge is on', async () => {
    const server = await startServer({
      config: { storage: { memory: { auth: { enable: false }, max_size_mbytes: 1, purge: true } } },
    });
    try {
      const at = (path: string, size: number): Promise<Response> =>
        fetch(`${server.url}/memfs${path}`, { method: 'PUT', body: Buffer.alloc(size) });
      for (const name of ['/1.ts', '/2.ts', '/3.ts']) assert.equal((await at(name, 300_000)).status, 201);
      assert.equal((await at('/4.ts', 400_000)).status, 201);
      assert.equal((await fetch(`${server.url}/memfs/1.ts`)).status, 404, 'the oldest went');
      for (const name of ['/2.ts', '/3.ts', '/4.ts'])
        assert.equal((await fetch(`${server.url}/memfs${name}`)).status, 200);
      assert.equal(
        (await at('/5.ts', MIB + 1)).status,
        413,
        'purging never makes room for a file above the limit',
      );
    } finally {
      await server.close();
    }
  });
});

/** A GET whose response is held unread once its head arrived: the server cannot finish sending it. */
function openHeldResponse(url: string): Promise<{ response: IncomingMessage; release: () => void }> {
  return new Promise((resolve, reject) => {
    const held = request(url, { agent: false }, (response) => {
      response.pause();
      resolve({ response, release: () => held.destroy() });
    });
    held.on('error', reject);
    held.end();
  });
}

describe('memfs serving many viewers', () => {
  it('sends every viewer of a file from the one stored copy, not a copy per viewer', async (t) => {
    // The observable: this process's ArrayBuffer memory (client and server both live in it) while
    // 8 viewers of a 16 MiB file each hold their response unread. A copy per viewer would stay
    // referenced by its socket's write queue until sent: 8 × 16 MiB. Garbage of the upload being
    // collected meanwhile can only lower the figure, so "less than one file" is a safe bound.
    const size = 16 * MIB;
    const viewers = 8;
    const server = await startServer({ config: { storage: { memory: { auth: { enable: false } } } } });
    const held: Array<{ response: IncomingMessage; release: () => void }> = [];
    try {
      const put = await fetch(`${server.url}/memfs/big.ts`, { method: 'PUT', body: Buffer.alloc(size, 7) });
      assert.equal(put.status, 201);
      const before = process.memoryUsage().arrayBuffers;
      for (let viewer = 0; viewer < viewers; viewer++) {
        held.push(await openHeldResponse(`${server.url}/memfs/big.ts`));
      }
      const grown = process.memoryUsage().arrayBuffers - before;
      t.diagnostic(`ArrayBuffer memory grew by ${(grown / MIB).toFixed(1)} MiB for ${viewers} viewers`);
      for (const { response } of held) {
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['content-length'], String(size));
      }
      assert.ok(grown < size, `grew by ${grown} bytes: the file was copied per viewer`);
    } finally {
      for (const { release } of held) release();
      await server.close();
    }
  });
});
