import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import { authConfig, loginPair, manualClock, rawRequest } from './support.js';

const MINIMAL = '{"app":"datarhei-core","auths":["localjwt"],"version":{"number":"16.0.0"}}';

async function packageVersion(): Promise<string> {
  const text = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function checkFull(
  body: Record<string, unknown>,
  server: TestServer,
  auths: string[],
  version: string,
): void {
  assert.deepEqual(Object.keys(body), [
    'app',
    'auths',
    'name',
    'id',
    'created_at',
    'uptime_seconds',
    'version',
    'server',
  ]);
  assert.equal(body.app, 'datarhei-core');
  assert.deepEqual(body.auths, auths);
  assert.equal(body.name, server.config.name);
  assert.equal(body.id, server.config.id);
  assert.match(String(body.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Number.isSafeInteger(body.uptime_seconds));
  assert.deepEqual(body.version, {
    number: '16.16.0',
    repository_commit: '',
    repository_branch: '',
    build_date: '',
    arch: `${process.platform}/${process.arch}`,
    compiler: `node ${process.version}`,
  });
  assert.deepEqual(body.server, { name: 'streamcore', version });
}

describe('GET /api with auth enabled', () => {
  let server: TestServer;
  let pair: { access_token: string; refresh_token: string };
  const clock = manualClock();
  before(async () => {
    server = await startServer({ config: authConfig({ jwt: { access_ttl_sec: 60 } }), now: clock.now });
    pair = await loginPair(server.url);
  });
  after(() => server.close());

  it('answers the minimal form without a valid access token', async () => {
    for (const path of ['/api', '/api/']) {
      for (const authorization of [undefined, 'Bearer garbage', `Bearer ${pair.refresh_token}`, 'Basic x']) {
        const answer = await rawRequest(`${server.url}${path}`, {
          headers: authorization === undefined ? {} : { authorization },
        });
        assert.equal(answer.status, 200);
        assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(answer.text, MINIMAL, `${path} ${String(authorization)}`);
      }
    }
  });

  it('answers the full form with a valid access token, and the minimal one once it expired', async () => {
    const version = await packageVersion();
    const headers = { authorization: `Bearer ${pair.access_token}` };
    for (const path of ['/api', '/api/']) {
      const answer = await rawRequest(`${server.url}${path}`, { headers });
      assert.equal(answer.status, 200);
      checkFull(JSON.parse(answer.text) as Record<string, unknown>, server, ['localjwt'], version);
    }
    const first = JSON.parse((await rawRequest(`${server.url}/api`, { headers })).text) as Record<
      string,
      number
    >;
    clock.advance(30_000);
    const later = JSON.parse((await rawRequest(`${server.url}/api`, { headers })).text) as Record<
      string,
      number
    >;
    assert.ok((later.uptime_seconds ?? 0) - (first.uptime_seconds ?? 0) >= 30, 'uptime follows the clock');
    assert.equal(later.created_at, first.created_at);
    clock.advance(31_000);
    const expired = await rawRequest(`${server.url}/api`, { headers });
    assert.equal(expired.text, MINIMAL);
  });
});

describe('GET /api with auth disabled', () => {
  it('answers the full form with empty auths', async () => {
    const server = await startServer({ config: { api: { auth: { enable: false } } } });
    try {
      const answer = await rawRequest(`${server.url}/api`);
      assert.equal(answer.status, 200);
      checkFull(JSON.parse(answer.text) as Record<string, unknown>, server, [], await packageVersion());
    } finally {
      await server.close();
    }
  });
});
