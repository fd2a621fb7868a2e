// test-alone: its clients race the server's time-outs
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { authConfig, rawRequest } from '../auth/support.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Fails a test that would otherwise hang: far above every time-out configured below. */
const GIVE_UP_MS = 30_000;

interface RawClient {
  socket: Socket;
  /** Everything the server wrote, as text. */
  received(): string;
  /** Resolves when the server closed the connection (or rejects after GIVE_UP_MS). */
  closed: Promise<void>;
}

/** A raw TCP client: sends exactly what a test writes, when it writes it. */
async function openClient(url: string, localAddress = '127.0.0.1'): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), localAddress });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the socket open for ${GIVE_UP_MS} ms; received: ${text}`));
    }, GIVE_UP_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return { socket, received: () => text, closed };
}

const LOGIN_HEAD =
  'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';

describe('slow clients', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        ...authConfig(),
        api: {
          ...authConfig().api,
          timeouts: { header_sec: 1, request_sec: 2, idle_sec: 60, keepalive_sec: 1 },
        },
      },
    });
  });
  after(() => server.close());

  it('closes a connection whose headers never finish', async () => {
    const client = await openClient(server.url);
    client.socket.write('POST /api/login HTTP/1.1\r\nHost: x\r\n');
    await client.closed;
    assert.match(client.received(), /^HTTP\/1\.1 408 /);
  });

  it('closes a connection whose body trickles in below its Content-Length', async () => {
    const client = await openClient(server.url);
    client.socket.write(LOGIN_HEAD);
    // One byte every 200 ms: never idle, never complete.
    const trickle = setInterval(() => client.socket.write(' '), 200);
    try {
      await client.closed;
    } finally {
      clearInterval(trickle);
    }
    assert.doesNotMatch(client.received(), /^HTTP\/1\.1 2/);
  });

  it('closes an idle keep-alive connection', async () => {
    const client = await openClient(server.url);
    client.socket.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
    await client.closed;
    assert.match(client.received(), /^HTTP\/1\.1 200 [^]*pong$/);
  });

  it('still answers a client that sends its request at once', async () => {
    const answer = await rawRequest(`${server.url}/ping`);
    assert.equal(answer.status, 200);
  });
});

describe('a stalled body', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        ...authConfig(),
        api: {
          ...authConfig().api,
          timeouts: { header_sec: 10, request_sec: 0, idle_sec: 1, keepalive_sec: 5 },
        },
      },
    });
  });
  after(() => server.close());

  it('closes a connection that stops sending half-way through its body', async () => {
    const client = await openClient(server.url);
    client.socket.write(`${LOGIN_HEAD}{"username":`);
    await client.closed;
    assert.doesNotMatch(client.received(), /^HTTP\/1\.1 2/);
  });
});

describe('connections per client address', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: { api: { connections: { max_per_address: 3, exempt: [] } } },
    });
  });
  after(() => server.close());

  it('answers 503 and closes a connection over the cap, counting each address on its own', async () => {
    const held = await Promise.all([1, 2, 3].map(() => openClient(server.url, '127.0.0.5')));
    // The server counts a connection when it accepts it: one round trip makes sure all three are.
    held[0]?.socket.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n');
    while (!(held[0]?.received().includes('pong') ?? false)) await new Promise((r) => setTimeout(r, 10));

    const over = await openClient(server.url, '127.0.0.5');
    await over.closed;
    assert.match(over.received(), /^HTTP\/1\.1 503 [^]*api\.connections\.max_per_address/);

    const elsewhere = await rawRequest(`${server.url}/ping`, { localAddress: '127.0.0.6' });
    assert.equal(elsewhere.status, 200, 'another address is not affected');

    held[1]?.socket.destroy();
    await held[1]?.closed;
    // The server sees the close a moment after the client: retry briefly.
    let again = await rawRequest(`${server.url}/ping`, { localAddress: '127.0.0.5' }).catch(() => undefined);
    for (let tries = 0; again?.status !== 200 && tries < 50; tries += 1) {
      await new Promise((r) => setTimeout(r, 20));
      again = await rawRequest(`${server.url}/ping`, { localAddress: '127.0.0.5' }).catch(() => undefined);
    }
    assert.equal(again?.status, 200, 'a freed slot can be used again');
    for (const client of held) client.socket.destroy();
  });
});
