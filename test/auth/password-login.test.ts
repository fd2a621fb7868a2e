import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  authConfig,
  envelopeOf,
  loginPair,
  manualClock,
  PASSWORD,
  payloadOf,
  postLogin,
  rawRequest,
  USERNAME,
} from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /api/login with username and password', () => {
  let server: TestServer;
  const clock = manualClock();
  before(async () => {
    server = await startServer({
      config: authConfig({
        jwt: { access_ttl_sec: 60, refresh_ttl_sec: 600 },
        throttle: { max_failures: 1000 },
      }),
      now: clock.now,
    });
  });
  after(() => server.close());

  it('answers a token pair with every claim of docs/auth.md#tokens', async () => {
    const answer = await postLogin(server.url, { username: USERNAME, password: PASSWORD, extra: 'ignored' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    const pair = JSON.parse(answer.text) as Record<string, string>;
    assert.deepEqual(Object.keys(pair).sort(), ['access_token', 'refresh_token']);
    const before = Math.floor(clock.now() / 1000);
    for (const [name, use, ttl] of [
      ['access_token', 'access', 60],
      ['refresh_token', 'refresh', 600],
    ] as const) {
      const token = pair[name] ?? '';
      const header = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()) as {
        alg: string;
      };
      assert.equal(header.alg, 'HS256');
      const claims = payloadOf(token);
      assert.equal(claims.iss, 'streamcore');
      assert.equal(claims.sub, USERNAME);
      assert.equal(claims.usefor, use);
      assert.equal(typeof claims.iat, 'number');
      assert.ok(Math.abs((claims.iat as number) - before) <= 2);
      assert.equal(claims.exp, (claims.iat as number) + ttl);
      assert.equal(claims.exi, ttl);
      assert.match(String(claims.jti), UUID);
    }
    assert.notEqual(payloadOf(pair.access_token ?? '').jti, payloadOf(pair.refresh_token ?? '').jti);
  });

  it('accepts a trailing newline after the JSON and a content type with parameters', async () => {
    const answer = await rawRequest(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: `${JSON.stringify({ username: USERNAME, password: PASSWORD })}\n`,
    });
    assert.equal(answer.status, 200);
  });

  it('answers 401 with the body of docs/auth.md#login-methods for wrong credentials', async () => {
    for (const body of [
      { username: USERNAME, password: 'wrong' },
      { username: 'someone', password: PASSWORD },
      { username: USERNAME, password: `${PASSWORD} ` },
    ]) {
      const answer = await postLogin(server.url, body);
      assert.equal(answer.status, 401);
      const envelope = envelopeOf(answer);
      assert.equal(envelope.message, 'Unauthorized');
      assert.equal(envelope.details.length, 1);
      assert.match(envelope.details[0] ?? '', /^Invalid authorization credentials: /);
    }
  });

  it('answers 400 "Missing authorization credentials" when nothing usable is sent', async () => {
    const bodies: Array<string | undefined> = [
      undefined,
      '',
      '{bad json',
      '[]',
      '"admin"',
      '42',
      'null',
      '{}',
      JSON.stringify({ username: USERNAME }),
      JSON.stringify({ password: PASSWORD }),
      JSON.stringify({ username: '', password: '' }),
      JSON.stringify({ username: USERNAME, password: '' }),
      JSON.stringify({ username: 5, password: PASSWORD }),
      JSON.stringify({ username: USERNAME, password: ['x'] }),
      JSON.stringify({ username: null, password: null }),
    ];
    for (const body of bodies) {
      const answer = await rawRequest(`${server.url}/api/login`, {
        method: 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body,
      });
      assert.equal(answer.status, 400, `body ${String(body)}`);
      const envelope = envelopeOf(answer);
      assert.equal(envelope.message, 'Bad Request');
      assert.equal(envelope.details[0], 'Missing authorization credentials', `body ${String(body)}`);
      assert.ok(envelope.details.length >= 2, 'the reason follows');
    }
  });

  it('answers 415 for a body that is not JSON and 413 for one that is too large', async () => {
    const form = await rawRequest(`${server.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=${USERNAME}&password=x`,
    });
    assert.equal(form.status, 415);
    envelopeOf(form);
    const large = await postLogin(server.url, { username: USERNAME, password: 'x'.repeat(70 * 1024) });
    assert.equal(large.status, 413);
    envelopeOf(large);
  });

  it('refreshes an access token with the refresh token, and only with it', async () => {
    const pair = await loginPair(server.url);
    const answer = await rawRequest(`${server.url}/api/login/refresh`, {
      headers: { authorization: `Bearer ${pair.refresh_token}` },
    });
    assert.equal(answer.status, 200);
    const body = JSON.parse(answer.text) as Record<string, string>;
    assert.deepEqual(Object.keys(body), ['access_token']);
    const claims = payloadOf(body.access_token ?? '');
    assert.equal(claims.usefor, 'access');
    assert.equal(claims.sub, USERNAME);
    assert.equal(claims.exi, 60);
    const guarded = await rawRequest(`${server.url}/api/v3/nothing-here`, {
      headers: { authorization: `Bearer ${body.access_token}` },
    });
    assert.equal(guarded.status, 404, 'the refreshed access token passes the guard');

    for (const authorization of [
      undefined,
      `Bearer ${pair.access_token}`,
      'Bearer garbage',
      `Basic ${pair.refresh_token}`,
      `Bearer ${pair.refresh_token}x`,
      'Bearer',
    ]) {
      const rejected = await rawRequest(`${server.url}/api/login/refresh`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      assert.equal(rejected.status, 401, String(authorization));
      assert.deepEqual(envelopeOf(rejected).details, ['Missing or invalid JWT token']);
    }
  });

  it('rejects tokens once they expire: access after its lifetime, refresh after its own', async () => {
    const pair = await loginPair(server.url);
    const auth = { authorization: `Bearer ${pair.access_token}` };
    assert.equal((await rawRequest(`${server.url}/api/v3/nothing-here`, { headers: auth })).status, 404);
    clock.advance(61_000);
    assert.equal((await rawRequest(`${server.url}/api/v3/nothing-here`, { headers: auth })).status, 401);
    const refreshed = await rawRequest(`${server.url}/api/login/refresh`, {
      headers: { authorization: `Bearer ${pair.refresh_token}` },
    });
    assert.equal(refreshed.status, 200);
    clock.advance(600_000);
    const late = await rawRequest(`${server.url}/api/login/refresh`, {
      headers: { authorization: `Bearer ${pair.refresh_token}` },
    });
    assert.equal(late.status, 401);
  });

  it('answers a wrong method on the login routes with 405', async () => {
    const answer = await rawRequest(`${server.url}/api/login`);
    assert.equal(answer.status, 405);
    assert.match(String(answer.headers.allow), /POST/);
    envelopeOf(answer);
  });
});

describe('tokens and changed credentials', () => {
  it('invalidates issued tokens when the secret, the username or the password changes', async () => {
    const first = await startServer({ config: authConfig() });
    const pair = await loginPair(first.url);
    await first.close();
    const changes = [
      authConfig({ jwt: { secret: 'another-secret-another-secret-1234' } }),
      authConfig({ password: 'another password' }),
      { ...authConfig({ username: 'root' }) },
    ];
    // The same config again accepts the token: the key is derived, not random per start.
    const same = await startServer({ config: authConfig() });
    try {
      const answer = await rawRequest(`${same.url}/api/v3/nothing-here`, {
        headers: { authorization: `Bearer ${pair.access_token}` },
      });
      assert.equal(answer.status, 404);
    } finally {
      await same.close();
    }
    for (const config of changes) {
      const server = await startServer({ config });
      try {
        const answer = await rawRequest(`${server.url}/api/v3/nothing-here`, {
          headers: { authorization: `Bearer ${pair.access_token}` },
        });
        assert.equal(answer.status, 401);
        const refresh = await rawRequest(`${server.url}/api/login/refresh`, {
          headers: { authorization: `Bearer ${pair.refresh_token}` },
        });
        assert.equal(refresh.status, 401);
      } finally {
        await server.close();
      }
    }
  });
});

describe('auth disabled', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { api: { auth: { enable: false } } } });
  });
  after(() => server.close());

  it('answers /api/login and /api/login/refresh with the 404 envelope', async () => {
    for (const [method, path] of [
      ['POST', '/api/login'],
      ['GET', '/api/login'],
      ['GET', '/api/login/refresh'],
    ] as const) {
      const answer = await rawRequest(`${server.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ username: 'a', password: 'b' }) : undefined,
      });
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.equal(envelopeOf(answer).message, 'Not Found');
    }
  });

  it('protects nothing under /api/v3', async () => {
    const answer = await rawRequest(`${server.url}/api/v3/nothing-here`);
    assert.equal(answer.status, 404);
  });
});
