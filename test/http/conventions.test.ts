import assert from 'node:assert/strict';
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

  it('answers a CORS preflight without authentication', async () => {
    const response = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'OPTIONS',
      headers: { origin: 'http://example.test', 'access-control-request-method': 'POST' },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
  });
});
