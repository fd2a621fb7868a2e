import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { rawRequest, type RawResponse } from './raw-request.js';

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('memfs basic auth is throttled like the login', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        api: { auth: { throttle: { max_failures: 3, window_sec: 300, delay_ms: 50 } } },
        storage: { memory: { auth: { username: 'admin', password: 'pw' } } },
      },
    });
  });
  after(() => server.close());

  const put = (from: string, authorization?: string, path = '/t.txt'): Promise<RawResponse> =>
    rawRequest(server.url, `/memfs${path}`, {
      method: 'PUT',
      body: 'x',
      localAddress: from,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('answers 429 with Retry-After to an address after max_failures wrong guesses', async () => {
    const from = '127.0.11.1';
    for (let guess = 0; guess < 3; guess += 1) {
      const answer = await put(from, basic('admin', `guess${guess}`));
      assert.equal(answer.status, 401, `guess ${guess}`);
    }
    const refused = await put(from, basic('admin', 'guess3'));
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    const envelope = JSON.parse(refused.body.toString('utf8')) as { code: number; details: string[] };
    assert.equal(envelope.code, 429);
    assert.equal((await put(from, basic('admin', 'pw'))).status, 429, 'even the right password waits');
  });

  it('still lets the right credentials in from an address without failures', async () => {
    // admin is locked by the guesses above (from one address) and by these, from several.
    for (let index = 0; index < 3; index += 1) {
      assert.equal((await put(`127.0.12.${index + 1}`, basic('admin', 'nope'))).status, 401);
    }
    assert.equal((await put('127.0.12.200', basic('admin', 'pw'), '/owner.txt')).status, 201);
  });

  it('does not count requests without basic credentials (ffmpeg asks for the challenge first)', async () => {
    const from = '127.0.13.1';
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const answer = await put(from);
      assert.equal(answer.status, 401);
      assert.match(String(answer.headers['www-authenticate']), /^Basic realm=/);
    }
    assert.equal((await put(from, basic('admin', 'pw'), '/ffmpeg.txt')).status, 201);
  });
});
