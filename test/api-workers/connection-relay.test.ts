import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ConnectionRelay } from '../../src/api-workers/connection-relay.js';
import type { ScannedRequest } from '../../src/api-workers/request-head.js';

/**
 * The relay of an API worker on real loopback sockets, with answers the test holds back: a client
 * that pipelines requests and does not read the answers must not make the worker read without
 * bound, and every request still gets its turn, in order.
 */

const REQUEST = (i: number): string => `GET /q/${i} HTTP/1.1\r\nHost: x\r\n\r\n`;

describe("an API worker's connection relay", () => {
  let server: Server;
  let port = 0;
  before(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  function nextConnection(): Promise<Socket> {
    return new Promise((resolve) => server.once('connection', resolve));
  }

  it('stops reading while 64 KiB of requests wait behind an answer, and answers them all in order after', async () => {
    const accepted = nextConnection();
    const client = connect(port, '127.0.0.1');
    const socket = await accepted;
    const served: string[] = [];
    let held: (() => void) | undefined;
    new ConnectionRelay(socket, {
      answersHere: () => true,
      // The first answer is held until the test lets it go; the others end at once.
      serve: (request: ScannedRequest, _body, _socket, ended) => {
        served.push(request.target);
        if (served.length === 1) held = () => ended(true);
        else setImmediate(() => ended(true));
      },
      handOff: () => assert.fail('nothing is handed off'),
      maxBodyBytes: 1024,
      keepAliveMs: 10_000,
      idleMs: 10_000,
    });
    const count = 20_000;
    const flood = Array.from({ length: count }, (_, i) => REQUEST(i)).join('');
    assert.ok(flood.length > 500 * 1024);
    client.write(flood);
    const deadline = Date.now() + 10_000;
    while (!socket.isPaused() && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(socket.isPaused(), 'the relay stopped reading');
    assert.deepEqual(served, ['/q/0'], 'one answer under way at a time');
    held?.();
    while (served.length < count && Date.now() < deadline + 20_000)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(served.length, count);
    assert.ok(
      served.every((target, i) => target === `/q/${i}`),
      'in order',
    );
    client.destroy();
  });
});
