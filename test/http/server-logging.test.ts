import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { defaultConfig } from '../../src/config/index.js';
import { createHttpServer } from '../../src/http/index.js';
import { capturingLogger } from '../auth/support.js';

/**
 * Fastify runs without a logger of its own (src/http/server.ts); these pin that what goes wrong
 * while answering still reaches the server's log, with the request id.
 */
describe('HTTP server logging', () => {
  const log = capturingLogger();
  let server: FastifyInstance;
  let url: string;

  before(async () => {
    ({ server } = await createHttpServer(defaultConfig(), log.logger));
    server.get('/test/throws', () => {
      throw new Error('handler broke');
    });
    server.get('/test/broken-stream', { compress: false }, (_request, reply) => {
      let sent = false;
      const body = new Readable({
        read() {
          if (sent) return;
          sent = true;
          this.push('first part of the answer');
          // Fails once the head and the first part are on the wire.
          setTimeout(() => this.destroy(new Error('disk went away')), 50);
        },
      });
      return reply.type('text/plain').send(body);
    });
    await server.listen({ host: '127.0.0.1', port: 0 });
    const address = server.server.address();
    assert.ok(address !== null && typeof address === 'object');
    url = `http://127.0.0.1:${address.port}`;
  });
  after(() => server.close());

  it('logs an unexpected error with the request id the 500 answer names', async () => {
    const response = await fetch(`${url}/test/throws`);
    assert.equal(response.status, 500);
    const body = (await response.json()) as { details: string[] };
    const requestId = /^request id (.+)$/.exec(body.details[0] ?? '')?.[1];
    assert.ok(requestId !== undefined, body.details.join());
    const line = log.lines().find((entry) => entry.msg === 'unexpected error while handling a request');
    assert.ok(line !== undefined, 'no log line');
    assert.equal(line.reqId, requestId);
    assert.match(JSON.stringify(line.err), /handler broke/);
  });

  it('logs a stream that fails after the headers went out', async () => {
    const response = await fetch(`${url}/test/broken-stream`);
    assert.equal(response.status, 200);
    await assert.rejects(response.text());
    for (let waited = 0; waited < 2000; waited += 20) {
      if (log.lines().some((entry) => entry.msg === 'response ended with an error after its headers')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const line = log.lines().find((entry) => entry.msg === 'response ended with an error after its headers');
    assert.ok(line !== undefined, JSON.stringify(log.lines()));
    assert.match(JSON.stringify(line.err), /disk went away/);
    assert.equal(typeof line.reqId, 'string');
  });

  it('writes no line for requests that went well', async () => {
    const before = log.lines().length;
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${url}/ping`)).status, 200);
    assert.equal(log.lines().length, before);
  });
});
