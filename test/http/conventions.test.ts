import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';

describe('HTTP conventions', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  it('answers GET /ping with pong as text', async () => {
    const response = await fetch(`${server.url}/ping`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await response.text(), 'pong');
  });

  it('answers an unknown route with the 404 envelope', async () => {
    const response = await fetch(`${server.url}/api/nothing-here`, { method: 'POST' });
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    const body = (await response.json()) as { code: number; message: string; details: unknown };
    assert.equal(body.code, 404);
    assert.equal(body.message, 'Not Found');
    assert.ok(Array.isArray(body.details));
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const response = await fetch(`${server.url}/ping`, { method: 'DELETE' });
    assert.equal(response.status, 405);
    assert.match(response.headers.get('allow') ?? '', /GET/);
    const body = (await response.json()) as { code: number; details: string[] };
    assert.equal(body.code, 405);
    assert.equal(body.details.length, 1);
  });

  it('answers a CORS preflight for reading a file from another origin', async () => {
    // The API's preflights: test/auth/guard.test.ts (auth on), test/http/local-only.test.ts (off).
    const response = await fetch(`${server.url}/memfs/live.m3u8`, {
      method: 'OPTIONS',
      headers: { origin: 'http://example.test', 'access-control-request-method': 'GET' },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  });

  it('answers an OPTIONS request that is no preflight with the envelope', async () => {
    const response = await fetch(`${server.url}/ping`, { method: 'OPTIONS' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET, HEAD');
    const body = (await response.json()) as { code: number; details: string[] };
    assert.equal(body.code, 405);
    assert.deepEqual(body.details, ['OPTIONS is not allowed on /ping']);
  });

  it('answers an undecodable URL with the 400 envelope', async () => {
    const response = await fetch(`${server.url}/api/v3/%zz`);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { code: number; message: string; details: string[] };
    assert.equal(body.code, 400);
    assert.equal(body.details.length, 1);
  });

  it('answers oversized headers with a 431 envelope and keeps serving', async () => {
    const port = Number(new URL(server.url).port);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 431 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { code: number; details: string[] };
    assert.equal(body.code, 431);
    assert.equal((await fetch(`${server.url}/ping`)).status, 200);
  });

  it('gzips JSON answers of at least 1 KiB for clients that accept gzip', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-encoding'), 'gzip');
    const catalog = (await response.json()) as unknown[];
    assert.equal(catalog.length, 29);
  });
});
