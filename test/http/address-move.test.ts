import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { RawConnection } from '../helpers/raw-connection.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ok } from '../process/support.js';
import { freePort } from '../helpers/free-port.js';

/** 32 MiB: far more than loopback's socket buffers hold, so most of it waits in the server. */
const BIG = 32 * 1024 * 1024;

describe('a reload that moves the HTTP listener', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { storage: { memory: { max_size_mbytes: 64 } } } });
  });
  after(() => server.close());

  it('keeps the connections it accepted: an idle keep-alive one, and a download under way', async () => {
    const { username, password } = server.config.storage.memory.auth;
    const put = await fetch(`${server.url}/memfs/big.bin`, {
      method: 'PUT',
      headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` },
      body: Buffer.alloc(BIG, 7),
    });
    assert.equal(put.status, 201, await put.text());
    const oldPort = Number(new URL(server.url).port);

    const idle = await RawConnection.open({ port: oldPort });
    assert.equal((await idle.request('GET /ping HTTP/1.1\r\nHost: test\r\n\r\n')).status, 200);

    // A download whose client has stopped reading: the answer is written, but most of it is
    // still in the server's buffers when the listener moves.
    const download = connect({ port: oldPort, host: '127.0.0.1' });
    await new Promise<void>((resolve) => download.once('connect', resolve));
    download.write('GET /memfs/big.bin HTTP/1.1\r\nHost: test\r\n\r\n');
    let received = 0;
    download.on('data', (chunk: Buffer) => (received += chunk.length));
    download.pause();
    const ended = new Promise<void>((resolve) => download.once('close', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const port = await freePort();
    await ok(server, 'PUT', '/config', { version: 3, address: `127.0.0.1:${port}` });
    assert.equal(await ok(server, 'GET', '/config/reload'), 'OK');
    assert.equal((await fetch(`http://127.0.0.1:${port}/ping`)).status, 200);

    assert.equal((await idle.request('GET /ping HTTP/1.1\r\nHost: test\r\n\r\n')).status, 200);
    idle.close();
    download.resume();
    download.end();
    // The whole answer arrives (its head and 32 MiB), then the server ends the connection.
    await Promise.race([
      ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${received} bytes after 30 s`)), 30_000)),
    ]);
    assert.ok(received > BIG, `${received} bytes of ${BIG} and a head`);
  });
});
