import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  authConfig,
  capturingLogger,
  envelopeOf,
  loginPair,
  manualClock,
  PASSWORD,
  postLogin,
  rawRequest,
  USERNAME,
  type Answer,
} from './support.js';

const WINDOW_SEC = 300;

describe('brute-force protection of POST /api/login', () => {
  let server: TestServer;
  const clock = manualClock();
  const log = capturingLogger();

  before(async () => {
    server = await startServer({
      config: authConfig({ throttle: { max_failures: 5, window_sec: WINDOW_SEC, delay_ms: 20 } }),
      now: clock.now,
      logger: log.logger,
    });
  });
  after(() => server.close());

  it('answers the sixth failure within the window from one address with 429 and Retry-After', async () => {
    const from = { localAddress: '127.0.0.2' };
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      const answer = await postLogin(server.url, { username: `user${attempt}`, password: 'wrong' }, from);
      assert.equal(answer.status, 401, `attempt ${attempt}`);
    }
    const sixth = await postLogin(server.url, { username: 'user6', password: 'wrong' }, from);
    assert.equal(sixth.status, 429);
    const retryAfter = Number(sixth.headers['retry-after']);
    assert.ok(retryAfter > WINDOW_SEC - 30 && retryAfter <= WINDOW_SEC, `Retry-After ${retryAfter}`);
    const envelope = envelopeOf(sixth);
    assert.equal(envelope.message, 'Too Many Requests');

    const right = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, from);
    assert.equal(right.status, 429, 'even right credentials wait while the address is blocked');

    const other = await postLogin(
      server.url,
      { username: USERNAME, password: PASSWORD },
      { localAddress: '127.0.0.3' },
    );
    assert.equal(other.status, 200, 'another address is unaffected');

    clock.advance(WINDOW_SEC * 1000);
    const later = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, from);
    assert.equal(later.status, 200, 'the window freed up');
  });

  it('slows a username tried from many addresses to one guess per address', async () => {
    for (let index = 0; index < 5; index += 1) {
      const answer = await postLogin(
        server.url,
        { username: 'victim', password: `guess${index}` },
        { localAddress: `127.0.1.${index + 1}` },
      );
      assert.equal(answer.status, 401);
    }
    const from = { localAddress: '127.0.1.9' };
    const next = await postLogin(server.url, { username: 'victim', password: 'guess' }, from);
    assert.equal(next.status, 401, 'an address without failures gets one attempt');
    const again = await postLogin(server.url, { username: 'victim', password: 'guess2' }, from);
    assert.equal(again.status, 429, 'and no second one while the username is locked');
    const otherUser = await postLogin(
      server.url,
      { username: 'other', password: 'x' },
      { localAddress: '127.0.1.9' },
    );
    assert.equal(otherUser.status, 401, 'the address itself is not blocked');
  });

  it('resets the count on success', async () => {
    const from = { localAddress: '127.0.2.1' };
    for (let round = 0; round < 3; round += 1) {
      for (let attempt = 0; attempt < 4; attempt += 1) {
        const answer = await postLogin(server.url, { username: USERNAME, password: 'wrong' }, from);
        assert.equal(answer.status, 401, `round ${round} attempt ${attempt}`);
      }
      const success = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, from);
      assert.equal(success.status, 200, `round ${round}`);
    }
  });

  it('does not count requests without usable credentials', async () => {
    const from = { localAddress: '127.0.3.1' };
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const answer = await rawRequest(`${server.url}/api/login`, {
        method: 'POST',
        localAddress: from.localAddress,
      });
      assert.equal(answer.status, 400);
    }
    const success = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, from);
    assert.equal(success.status, 200);
  });

  it('logs one line per failure naming the address and the username', async () => {
    const marker = `probe-${Date.now()}`;
    await postLogin(server.url, { username: marker, password: 'wrong' }, { localAddress: '127.0.4.1' });
    const lines = log.lines().filter((line) => String(line.msg).includes(marker));
    assert.equal(lines.length, 1);
    const line = lines[0] ?? {};
    assert.equal(
      line.msg,
      `login failed: address=127.0.4.1 user="${marker}" method=password reason=wrong username or password`,
    );
    assert.equal(line.address, '127.0.4.1');
    assert.equal(line.username, marker);
    const secretLeak = log.lines().some((entry) => JSON.stringify(entry).includes(PASSWORD));
    assert.equal(secretLeak, false, 'the password never appears in the log');
  });

  it('quotes usernames so a crafted one cannot forge the address in the line', async () => {
    const crafted = 'x" address=10.9.9.9 user="y';
    await postLogin(server.url, { username: crafted, password: 'wrong' }, { localAddress: '127.0.4.2' });
    const line = log.lines().find((entry) => entry.username === crafted);
    assert.ok(line !== undefined);
    assert.match(
      String(line.msg),
      /^login failed: address=127\.0\.4\.2 user="x\\" address=10\.9\.9\.9 user=\\"y" /,
    );
  });
});

describe('brute-force protection cannot be turned against the owner', () => {
  let server: TestServer;
  const MAX_TRACKED = 20;
  before(async () => {
    server = await startServer({
      config: authConfig({
        throttle: { max_failures: 5, window_sec: WINDOW_SEC, delay_ms: 1, max_tracked: MAX_TRACKED },
      }),
    });
  });
  after(() => server.close());

  it('lets the right password in from a clean address while the username is locked', async () => {
    const attacker = { localAddress: '127.0.5.1' };
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const answer = await postLogin(
        server.url,
        { username: USERNAME, password: `guess${attempt}` },
        attacker,
      );
      assert.equal(answer.status, 401);
    }
    const locked = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, attacker);
    assert.equal(locked.status, 429, 'the attacking address keeps its 429 (docs/auth.md#login-methods)');

    const owner = await postLogin(
      server.url,
      { username: USERNAME, password: PASSWORD },
      { localAddress: '127.0.5.200' },
    );
    assert.equal(owner.status, 200, 'the owner from an address without failures is let in');
  });

  it('gives an attacker who rotates addresses one guess per address while the username is locked', async () => {
    for (let index = 0; index < 5; index += 1) {
      const answer = await postLogin(
        server.url,
        { username: USERNAME, password: `rotate${index}` },
        { localAddress: `127.0.7.${index + 1}` },
      );
      assert.equal(answer.status, 401);
    }
    const fresh = { localAddress: '127.0.7.50' };
    const first = await postLogin(server.url, { username: USERNAME, password: 'another' }, fresh);
    assert.equal(first.status, 401, 'a fresh address gets its one guess');
    const second = await postLogin(server.url, { username: USERNAME, password: 'and another' }, fresh);
    assert.equal(second.status, 429, 'and no second one');
    assert.ok(Number(second.headers['retry-after']) > 0);
    const right = await postLogin(server.url, { username: USERNAME, password: PASSWORD }, fresh);
    assert.equal(right.status, 429, 'an address with failures waits, even with the right password');
    const owner = await postLogin(
      server.url,
      { username: USERNAME, password: PASSWORD },
      { localAddress: '127.0.7.200' },
    );
    assert.equal(owner.status, 200);
  });

  it('keeps the lock of the attacked username when failures for many other names churn the table', async () => {
    for (let index = 0; index < 5; index += 1) {
      await postLogin(
        server.url,
        { username: USERNAME, password: `churn${index}` },
        { localAddress: `127.0.8.${index + 1}` },
      );
    }
    // Ten times the table's size in failures for other names, five per address (then it is locked).
    const names = MAX_TRACKED * 10;
    for (let index = 0; index < names; index += 1) {
      const answer = await postLogin(
        server.url,
        { username: `other-${index}`, password: 'x' },
        { localAddress: `127.0.9.${Math.floor(index / 5) + 1}` },
      );
      assert.equal(answer.status, 401, `failure ${index}`);
    }
    const probe = { localAddress: '127.0.10.1' };
    assert.equal((await postLogin(server.url, { username: 'probe', password: 'x' }, probe)).status, 401);
    const refused = await postLogin(server.url, { username: USERNAME, password: 'guess' }, probe);
    assert.equal(refused.status, 429, 'the username is still locked');
  });
});

describe('the failure delay', () => {
  let server: TestServer;
  const DELAY_MS = 2000;
  const FAILURES = 8;
  const log = capturingLogger();
  before(async () => {
    server = await startServer({
      config: {
        ...authConfig({ throttle: { max_failures: 100, delay_ms: DELAY_MS } }),
        metrics: { enable: true, interval_sec: 1, range_sec: 10 },
      },
      logger: log.logger,
    });
  });
  after(() => server.close());

  /** `POST /api/v3/metrics` for `cpu_idle`: a guarded route that reads the metrics store. */
  const queryCpuIdle = (accessToken: string): Promise<Answer> =>
    rawRequest(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ metrics: [{ name: 'cpu_idle' }] }),
    });
  const cpuIdleSeries = (answer: Answer): number =>
    (JSON.parse(answer.text) as { metrics: { name: string }[] }).metrics.filter(
      (series) => series.name === 'cpu_idle',
    ).length;

  it('delays failed logins without blocking other requests', async (t) => {
    const { access_token } = await loginPair(server.url);
    // The query has something to find once the first sample is collected.
    for (let tries = 0; cpuIdleSeries(await queryCpuIdle(access_token)) === 0; tries++) {
      assert.ok(tries < 100, 'no cpu_idle sample within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const marker = `delayed-${Date.now()}`;
    const events: string[] = [];
    const started = Date.now();
    const failures = Array.from({ length: FAILURES }, (_, index) =>
      postLogin(server.url, { username: `${marker}-${index}`, password: 'wrong' }).then((answer) => {
        events.push('failure');
        return { answer, elapsed: Date.now() - started };
      }),
    );
    // A failure's line is logged before its delay begins: once all are logged, all are pending.
    const logged = (): number => log.lines().filter((line) => String(line.msg).includes(marker)).length;
    while (logged() < FAILURES) await new Promise((resolve) => setTimeout(resolve, 10));
    const pendingAfterMs = Date.now() - started;
    assert.equal(events.length, 0, 'no failure was answered before its delay');

    const queryStarted = Date.now();
    const query = await queryCpuIdle(access_token);
    const queryMs = Date.now() - queryStarted;
    events.push('query');
    const login = await postLogin(server.url, { username: USERNAME, password: PASSWORD });
    events.push('login');
    const results = await Promise.all(failures);
    t.diagnostic(
      `${FAILURES} failures pending after ${pendingAfterMs} ms; metrics query answered in ${queryMs} ms; ` +
        `failures answered after ${Math.min(...results.map((r) => r.elapsed))}–` +
        `${Math.max(...results.map((r) => r.elapsed))} ms (delay ${DELAY_MS} ms)`,
    );

    assert.equal(query.status, 200, query.text);
    assert.equal(cpuIdleSeries(query), 1, query.text);
    assert.equal(login.status, 200);
    assert.deepEqual(
      events.slice(0, 2),
      ['query', 'login'],
      'the query and a login were answered while the failures were pending',
    );
    for (const { answer, elapsed } of results) {
      assert.equal(answer.status, 401);
      // Timers may fire a millisecond early; nothing here is an upper bound.
      assert.ok(elapsed >= DELAY_MS - 50, `failure answered after ${elapsed} ms`);
    }
  });

  it('ends pending delays at shutdown', async () => {
    const other = await startServer({ config: authConfig({ throttle: { delay_ms: 10_000 } }) });
    const pending = postLogin(other.url, { username: USERNAME, password: 'wrong' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await other.close();
    const answer = await pending;
    assert.equal(answer.status, 401);
    assert.ok(Date.now() - started < 5000, 'shutdown did not wait out the delay');
  });
});
