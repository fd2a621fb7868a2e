import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { authConfig, envelopeOf, loginPair, rawRequest, type Answer } from '../auth/support.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { lavfiProcess } from '../process/support.js';

/** `POST /api/v3/process` as a web page (or a tool, without `origin`) sends it. */
function createProcess(server: TestServer, id: string, headers: Record<string, string>): Promise<Answer> {
  return rawRequest(`${server.url}/api/v3/process`, {
    method: 'POST',
    // JSON, as a page sends it once a preflight granted it (the API refuses text/plain with 415).
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(lavfiProcess(id, { autostart: false })),
  });
}

async function processIds(server: TestServer): Promise<string[]> {
  const answer = await rawRequest(`${server.url}/api/v3/process`);
  return (JSON.parse(answer.text) as { id: string }[]).map((process) => process.id);
}

/** The raw answer to a request written byte for byte (e.g. without a Host header). */
function rawHttp10(server: TestServer, request: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.end(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

/** A browser's CORS preflight for `method` (and `requestHeaders`, comma-separated) from `origin`. */
function preflight(
  server: TestServer,
  path: string,
  origin: string,
  method: string,
  requestHeaders?: string,
): Promise<Answer> {
  const headers: Record<string, string> = { origin, 'access-control-request-method': method };
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return rawRequest(`${server.url}${path}`, { method: 'OPTIONS', headers });
}

function assertRefused(answer: Answer, detail: RegExp): void {
  assert.equal(answer.status, 403, answer.text);
  const envelope = envelopeOf(answer);
  assert.equal(envelope.code, 403);
  assert.equal(envelope.message, 'Forbidden');
  assert.match(envelope.details.join(' '), detail);
  assert.equal(answer.headers['access-control-allow-origin'], undefined);
}

describe('with authentication off, only the local user can use the API (issue 24 item 9)', () => {
  let server: TestServer;
  let port: string;
  before(async () => {
    server = await startServer({
      config: { api: { auth: { enable: false } }, storage: { memory: { auth: { enable: false } } } },
    });
    port = new URL(server.url).port;
  });
  after(() => server.close());

  it('answers every loopback spelling of Host, with and without the port', async () => {
    for (const host of [
      `localhost:${port}`,
      'localhost',
      `LOCALHOST:${port}`,
      'localhost.',
      `app.localhost:${port}`,
      `127.0.0.1:${port}`,
      '127.0.0.1',
      `127.1:${port}`,
      '127.255.0.9',
      '2130706433',
      `0x7f.1:${port}`,
      `[::1]:${port}`,
      '[::1]',
      '[0:0:0:0:0:0:0:1]',
      `[::ffff:127.0.0.1]:${port}`,
    ]) {
      const answer = await rawRequest(`${server.url}/api/v3/config`, { headers: { host } });
      assert.equal(answer.status, 200, `Host: ${host}: ${answer.text}`);
    }
  });

  it('refuses any other Host with 403 naming it (DNS rebinding)', async () => {
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `localhost.evil.example:${port}`,
      `127.0.0.1.evil.example`,
      `192.168.1.10:${port}`,
      `[::2]:${port}`,
      `evil.example@127.0.0.1:${port}`,
    ]) {
      const answer = await rawRequest(`${server.url}/api/v3/config`, { headers: { host } });
      assertRefused(answer, /Host .* is not a loopback name or address: with api\.auth\.enable off/);
    }
    // HTTP/1.0 may leave Host out; that names no loopback host either.
    const bare = await rawHttp10(server, 'GET /api/v3/config HTTP/1.0\r\n\r\n');
    assert.match(bare, /^HTTP\/1\.1 403 /);
    // The page the attacker re-pointed to 127.0.0.1 calls "its own" origin.
    const rebound = await createProcess(server, 'rebound', {
      host: `evil.example:${port}`,
      origin: `http://evil.example:${port}`,
    });
    assertRefused(rebound, /Host "evil\.example:\d+" is not a loopback name/);
    assert.deepEqual(await processIds(server), []);
  });

  it('refuses requests from other origins to the API, reads and changes alike', async () => {
    for (const origin of ['http://evil.example', 'null', `http://localhost:${Number(port) + 1}`]) {
      assertRefused(await createProcess(server, 'cross', { origin }), /Origin .* is not this server's/);
      const read = await rawRequest(`${server.url}/api/v3/config`, { headers: { origin } });
      assertRefused(read, /Origin .* is not this server's/);
    }
    assert.deepEqual(await processIds(server), []);
    // An <img> or a link from another site sends no Origin, but its fetch metadata says whose it is.
    const reload = await rawRequest(`${server.url}/api/v3/config/reload`, {
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image' },
    });
    assertRefused(reload, /Sec-Fetch-Site "cross-site"/);
    const sameSite = await rawRequest(`${server.url}/api/v3/config`, {
      headers: { 'sec-fetch-site': 'same-site' },
    });
    assertRefused(sameSite, /Sec-Fetch-Site "same-site"/);
    for (const site of ['same-origin', 'none']) {
      const own = await rawRequest(`${server.url}/api/v3/config`, { headers: { 'sec-fetch-site': site } });
      assert.equal(own.status, 200, `Sec-Fetch-Site: ${site}`);
    }
    // Its own origin (the dashboard) and tools without Origin still may.
    assert.equal((await createProcess(server, 'own', { origin: server.url })).status, 200);
    assert.equal((await createProcess(server, 'tool', {})).status, 200);
    assert.deepEqual((await processIds(server)).sort(), ['own', 'tool']);
  });

  it('grants no preflight for a change, and refuses the API preflight', async () => {
    const api = await preflight(server, '/api/v3/process', 'http://evil.example', 'POST');
    assertRefused(api, /Origin "http:\/\/evil\.example" is not this server's/);
    const write = await preflight(server, '/memfs/x.m3u8', 'http://evil.example', 'PUT');
    assert.equal(write.status, 204);
    assert.equal(write.headers['access-control-allow-origin'], undefined);
    // Players on other origins still read files (a ranged GET needs a preflight).
    const read = await preflight(server, '/memfs/x.m3u8', 'http://player.example', 'GET', 'range');
    assert.equal(read.status, 204);
    assert.equal(read.headers['access-control-allow-origin'], '*');
    assert.equal(read.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
  });

  it('refuses a foreign page writing into memfs, and still serves files to it', async () => {
    const put = await rawRequest(`${server.url}/memfs/page.html`, {
      method: 'PUT',
      headers: { origin: 'http://evil.example', 'content-type': 'text/plain' },
      body: 'x',
    });
    assertRefused(put, /Origin "http:\/\/evil\.example" is not this server's/);
    assert.equal((await rawRequest(`${server.url}/memfs/page.html`)).status, 404);
    // A tool (ffmpeg) sends no Origin; its upload goes through.
    const tool = await rawRequest(`${server.url}/memfs/page.html`, { method: 'PUT', body: 'x' });
    assert.equal(tool.status, 201);
    const read = await rawRequest(`${server.url}/memfs/page.html`, {
      headers: { origin: 'http://player.example', host: `stream.example:${port}` },
    });
    assert.equal(read.status, 200);
    assert.equal(read.headers['access-control-allow-origin'], '*');
  });

  it('keeps the public routes public', async () => {
    const widget = await rawRequest(`${server.url}/api/v3/widget/process/none`, {
      headers: { origin: 'null', host: `stream.example:${port}` },
    });
    assert.equal(widget.status, 404);
    assert.equal(widget.headers['access-control-allow-origin'], '*');
  });
});

describe('with authentication on, the API keeps its CORS for clients on other origins', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: authConfig() });
  });
  after(() => server.close());

  it('grants the preflight and answers a bearer call from another origin and Host', async () => {
    const granted = await preflight(
      server,
      '/api/v3/process',
      'http://ui.example',
      'POST',
      'authorization, content-type',
    );
    assert.equal(granted.status, 204);
    assert.equal(granted.headers['access-control-allow-origin'], '*');
    assert.match(String(granted.headers['access-control-allow-methods']), /POST/);
    const { access_token: token } = await loginPair(server.url);
    const created = await rawRequest(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: {
        origin: 'http://ui.example',
        host: 'core.example:8080',
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(lavfiProcess('ui', { autostart: false })),
    });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.headers['access-control-allow-origin'], '*');
  });
});
