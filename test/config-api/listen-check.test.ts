import assert from 'node:assert/strict';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';

interface Envelope {
  details: string[];
}

function holdTcp(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => resolve(server));
  });
}

function holdUdp(): Promise<UdpSocket> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind({ address: '127.0.0.1', port: 0 }, () => resolve(socket));
  });
}

/**
 * An address the server cannot bind is refused before it is stored (issue 24 item 6): stored, it
 * would stop the next start with exit 1, and nobody could reach the API to undo it. The server
 * runs with authentication on, so addresses beyond loopback pass the open-server check.
 */
describe('config API: listener addresses are bound before they are stored', () => {
  let server: TestServer;
  let configFile: string;
  let tcp: Server;
  let udp: UdpSocket;
  let tcpPort: number;
  let udpPort: number;
  let token: string;
  before(async () => {
    server = await startServer({
      config: {
        address: `127.0.0.1:${await freePort()}`,
        api: { auth: { enable: true, username: 'admin', password: 'a-password-0815' } },
        // Only the file may name them; RTMPS is off, so they are not read at start.
        tls: { cert_file: '/nonexistent/cert.pem', key_file: '/nonexistent/key.pem' },
      },
    });
    configFile = join(server.dir, 'config.json');
    tcp = await holdTcp();
    udp = await holdUdp();
    tcpPort = (tcp.address() as AddressInfo).port;
    udpPort = udp.address().port;
    const login = await fetch(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'a-password-0815' }),
    });
    token = ((await login.json()) as { access_token: string }).access_token;
  });
  after(async () => {
    tcp.close();
    udp.close();
    await server.close();
  });

  async function put(
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: Envelope; text: string }> {
    const response = await fetch(`${server.url}/api/v3/config`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ version: 3, ...body }),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Envelope, text };
  }

  async function assertRefused(body: Record<string, unknown>, expected: RegExp): Promise<void> {
    const before = await readFile(configFile, 'utf8');
    const answer = await put(body);
    assert.equal(answer.status, 400, answer.text);
    assert.equal(answer.body.details.length, 1, answer.text);
    assert.match(answer.body.details[0] ?? '', expected);
    assert.equal(await readFile(configFile, 'utf8'), before, 'nothing stored');
  }

  it('refuses a port in use, naming address and the reason; takes free ones and its own', async () => {
    await assertRefused(
      { address: `127.0.0.1:${tcpPort}` },
      new RegExp(
        `^address: cannot listen on "127\\.0\\.0\\.1:${tcpPort}": the port is in use \\(EADDRINUSE\\)$`,
      ),
    );
    // `:port` binds every interface with authentication on: in use as well.
    await assertRefused({ address: `:${tcpPort}` }, /^address: cannot listen on ".*": the port is in use/);
    // Free addresses pass, and so does the port the server holds itself, under another host: it
    // lets go of it when it stops.
    const own = new URL(server.url).port;
    for (const body of [
      { address: `0.0.0.0:${own}` },
      { address: `127.0.0.1:${own}` },
      {
        address: '127.0.0.1:0',
        rtmp: { enable: true, address: '127.0.0.1:0' },
        srt: { enable: true, address: '127.0.0.1:0' },
      },
    ]) {
      const answer = await put(body);
      assert.equal(answer.status, 200, `${JSON.stringify(body)}: ${answer.text}`);
    }
  });

  it('refuses an address that is not on this machine', async () => {
    await assertRefused(
      { address: '192.0.2.1:80' },
      /^address: cannot listen on "192\.0\.2\.1:80": the address is not one of this machine's \(EADDRNOTAVAIL\)$/,
    );
  });

  it(
    'refuses a privileged port when not running as root',
    { skip: process.getuid?.() === 0 ? 'running as root: every port may be bound' : false },
    async () => {
      await assertRefused(
        { address: '127.0.0.1:80' },
        /^address: cannot listen on "127\.0\.0\.1:80": the server may not use/,
      );
    },
  );

  it('checks the RTMP, RTMPS and SRT listeners too, and two that collide', async () => {
    await assertRefused(
      { rtmp: { enable: true, address: `127.0.0.1:${tcpPort}` } },
      /^rtmp\.address: cannot listen on ".*": the port is in use/,
    );
    await assertRefused(
      {
        rtmp: { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: `127.0.0.1:${tcpPort}` },
      },
      /^rtmp\.address_tls: cannot listen on ".*": the port is in use/,
    );
    await assertRefused(
      { srt: { enable: true, address: `127.0.0.1:${udpPort}` } },
      /^srt\.address: cannot listen on ".*": the port is in use/,
    );
    await assertRefused(
      { srt: { enable: true, address: '192.0.2.1:6000' } },
      /^srt\.address: cannot listen on ".*": the address is not one of this machine's/,
    );
    const shared = await freePort();
    await assertRefused(
      { address: `127.0.0.1:${shared}`, rtmp: { enable: true, address: `127.0.0.1:${shared}` } },
      /^rtmp\.address: cannot listen on ".*": the port is in use/,
    );
  });
});
