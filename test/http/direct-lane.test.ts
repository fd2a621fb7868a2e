import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { Config } from '../../src/config/index.js';
import { authConfig, loginPair, rawRequest, type Answer } from '../auth/support.js';
import { startServer, type DeepPartial, type TestServer } from '../helpers/server.js';

/**
 * The direct lane (src/http/direct-lane.ts) answers the catalog ahead of fastify. Its answers
 * must be fastify's, header for header: each case below asks the same thing twice, once as the
 * lane serves it (`/api/v3/metrics`) and once in a spelling only fastify serves (with a query,
 * routed to the same handler), and checks which path answered by the lane's count.
 */

const CATALOG = '/api/v3/metrics';

/** The headers that describe the answer (not the moment or the connection). */
function answerHeaders(answer: Answer): Record<string, string | string[] | undefined> {
  const headers: Record<string, string | string[] | undefined> = { ...answer.headers };
  for (const name of ['date', 'connection', 'keep-alive']) delete headers[name];
  return headers;
}

async function start(config: DeepPartial<Config>): Promise<TestServer> {
  return startServer({ config: { ...config, metrics: { enable: true, interval_sec: 2, range_sec: 60 } } });
}

describe('direct lane: catalog answers equal fastify’s', () => {
  let server: TestServer;
  let bearer: Record<string, string>;

  before(async () => {
    // Loopback is on the default ignore list: clear it, so the test's requests are sessions.
    server = await start({ ...authConfig(), sessions: { enable: true, ip_ignorelist: [] } });
    bearer = { authorization: `Bearer ${(await loginPair(server.url)).access_token}` };
  });
  after(() => server.close());

  /** Asks `path` as the lane and as fastify; asserts who answered and that both answers match. */
  async function compare(headers: Record<string, string>, path = CATALOG): Promise<Answer> {
    const lane = server.app.lane;
    const before = lane.answered;
    const viaFastify = await rawRequest(`${server.url}${path}?via=fastify`, { headers });
    assert.equal(lane.answered, before, 'a query goes to fastify');
    const viaLane = await rawRequest(`${server.url}${path}`, { headers });
    assert.equal(lane.answered, before + 1, 'the lane answered');
    assert.equal(viaLane.status, viaFastify.status);
    assert.deepEqual(answerHeaders(viaLane), answerHeaders(viaFastify));
    assert.deepEqual(viaLane.body, viaFastify.body);
    return viaLane;
  }

  it('answers a token verified before, with the catalog and the CORS headers', async () => {
    // The first request with this token is verified by the guard in fastify; then it is cached.
    await rawRequest(`${server.url}${CATALOG}`, { headers: bearer });
    const answer = await compare(bearer);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(answer.headers['access-control-allow-origin'], '*');
    assert.equal(answer.headers.vary, 'Accept-Encoding');
    assert.equal(answer.headers['content-length'], String(answer.body.length));
    const catalog = JSON.parse(answer.body.toString('utf8')) as { name: string }[];
    assert.equal(catalog.length, 29);
  });

  it('serves the trailing-slash route and requests with an Origin alike', async () => {
    await compare(bearer, `${CATALOG}/`);
    await compare({ ...bearer, origin: 'https://ui.example' });
  });

  it('sends the gzip encoding once fastify has made it', async () => {
    const headers = { ...bearer, 'accept-encoding': 'gzip, deflate' };
    const answer = await compare(headers);
    assert.equal(answer.headers['content-encoding'], 'gzip');
    const plain = await rawRequest(`${server.url}${CATALOG}`, { headers: bearer });
    assert.deepEqual(gunzipSync(answer.body), plain.body);
  });

  it('leaves every other request to fastify', async () => {
    const lane = server.app.lane;
    const before = lane.answered;
    const unknownToken = await rawRequest(`${server.url}${CATALOG}`, {
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(unknownToken.status, 401);
    assert.equal((await rawRequest(`${server.url}${CATALOG}`)).status, 401);
    const head = await rawRequest(`${server.url}${CATALOG}`, { method: 'HEAD', headers: bearer });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    const withBody = await rawRequest(`${server.url}${CATALOG}`, {
      headers: { ...bearer, 'content-type': 'text/plain', 'content-length': '1' },
      body: 'x',
    });
    assert.equal(withBody.status, 200);
    const deleted = await rawRequest(`${server.url}${CATALOG}`, { method: 'DELETE', headers: bearer });
    assert.equal(deleted.status, 405);
    assert.equal(lane.answered, before, 'none of these was the lane’s');
  });

  it('meters its answers as http sessions, byte for byte like fastify’s', async () => {
    const totals = async (): Promise<{ sessions: number; tx: number }> => {
      const answer = await rawRequest(`${server.url}/api/v3/session?collectors=http`, { headers: bearer });
      const summary = JSON.parse(answer.body.toString('utf8')) as {
        http: { summary: { local: Record<string, { sessions: number; traffic_tx_bytes: number }> } };
      };
      const local = summary.http.summary.local[CATALOG];
      return { sessions: local?.sessions ?? 0, tx: local?.traffic_tx_bytes ?? 0 };
    };
    // A session is counted when its response closes: wait for the counts to settle.
    const settled = async (sessions: number): Promise<{ sessions: number; tx: number }> => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const now = await totals();
        if (now.sessions >= sessions) return now;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return totals();
    };
    const start = await totals();
    await rawRequest(`${server.url}${CATALOG}?via=fastify`, { headers: bearer });
    const afterFastify = await settled(start.sessions + 1);
    const before = server.app.lane.answered;
    for (let i = 0; i < 3; i++) await rawRequest(`${server.url}${CATALOG}`, { headers: bearer });
    assert.equal(server.app.lane.answered, before + 3);
    const afterLane = await settled(afterFastify.sessions + 3);
    assert.equal(afterLane.sessions, afterFastify.sessions + 3);
    const fastifyBytes = afterFastify.tx - start.tx;
    assert.ok(fastifyBytes > 0);
    // Same headers (a date of the same length) and body: the same bytes on the wire.
    assert.ok(Math.abs((afterLane.tx - afterFastify.tx) / 3 - fastifyBytes) < 1, 'tx bytes per answer');
  });
});

describe('direct lane: with listed CORS origins', () => {
  let server: TestServer;
  let bearer: Record<string, string>;

  before(async () => {
    server = await start({ ...authConfig(), storage: { cors: { origins: ['https://ui.example'] } } });
    bearer = { authorization: `Bearer ${(await loginPair(server.url)).access_token}` };
    await rawRequest(`${server.url}${CATALOG}`, { headers: bearer });
  });
  after(() => server.close());

  for (const origin of ['https://ui.example', 'https://elsewhere.example', undefined]) {
    it(`answers like fastify for Origin ${origin ?? '(none)'}`, async () => {
      const headers = origin === undefined ? bearer : { ...bearer, origin };
      const before = server.app.lane.answered;
      const viaFastify = await rawRequest(`${server.url}${CATALOG}?via=fastify`, { headers });
      const viaLane = await rawRequest(`${server.url}${CATALOG}`, { headers });
      assert.equal(server.app.lane.answered, before + 1);
      assert.deepEqual(answerHeaders(viaLane), answerHeaders(viaFastify));
      assert.equal(viaLane.headers.vary, 'Origin, Accept-Encoding');
      const allowed = origin === 'https://ui.example' ? origin : undefined;
      assert.equal(viaLane.headers['access-control-allow-origin'], allowed);
    });
  }
});

describe('direct lane: configurations it stays out of, or needs no token for', () => {
  it('answers without a token when auth is off', async () => {
    const server = await start({ api: { auth: { enable: false } } });
    try {
      const viaFastify = await rawRequest(`${server.url}${CATALOG}?via=fastify`);
      const viaLane = await rawRequest(`${server.url}${CATALOG}`);
      assert.equal(server.app.lane.answered, 1);
      assert.equal(viaLane.status, 200);
      assert.deepEqual(answerHeaders(viaLane), answerHeaders(viaFastify));
    } finally {
      await server.close();
    }
  });

  it('stays shut behind trusted proxies, whose header names the client', async () => {
    const auth = authConfig();
    const server = await start({ ...auth, api: { ...auth.api, trusted_proxies: ['127.0.0.1'] } });
    try {
      const bearer = { authorization: `Bearer ${(await loginPair(server.url)).access_token}` };
      for (let i = 0; i < 2; i++) {
        const answer = await rawRequest(`${server.url}${CATALOG}`, { headers: bearer });
        assert.equal(answer.status, 200);
      }
      assert.equal(server.app.lane.answered, 0);
    } finally {
      await server.close();
    }
  });
});
