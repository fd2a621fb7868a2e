import assert from 'node:assert/strict';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { socketInodes } from '../../src/process/supervise/encoder-connections.js';
import { RawConnection, type RawAnswer } from '../helpers/raw-connection.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * The API on every core (docs/performance.md#the-api-on-every-core): a worker process shares the
 * listening socket, answers logins and metric queries itself and hands every other request to the
 * main process with the connection. Which process answered is read from /proc: the one that holds
 * the server's end of the connection once the answer is in (this test process is the main one).
 */

const ENTRY = {
  modulePath: join(import.meta.dirname, '..', '..', 'src', 'main.ts'),
  execArgv: ['--import', import.meta.resolve('tsx')],
};
const USERNAME = 'admin';

function post(path: string, body: unknown, token?: string): string {
  const text = JSON.stringify(body);
  const auth = token === undefined ? '' : `Authorization: Bearer ${token}\r\n`;
  return `POST ${path} HTTP/1.1\r\nHost: test\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

function get(path: string, token: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${token}\r\n\r\n`;
}

const login = (password: string): string => post('/api/login', { username: USERNAME, password });

/** The process holding the server's end of `connection`: a worker's pid, or 'main'. */
async function holderOf(server: TestServer, connection: RawConnection): Promise<number | 'main' | undefined> {
  const serverPort = Number(new URL(server.url).port);
  const tables = await Promise.all(['tcp', 'tcp6'].map((name) => readFile(`/proc/net/${name}`, 'utf8')));
  const inodes = new Set(
    tables.flatMap((table) => socketInodes(table, serverPort, connection.socket.localPort!)),
  );
  for (const pid of [...(server.app.apiWorkers?.pids() ?? []), 'self' as const]) {
    const dir = `/proc/${pid}/fd`;
    const fds = await readdir(dir).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(join(dir, fd)).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) return pid === 'self' ? 'main' : pid;
    }
  }
  return undefined;
}

/**
 * A new connection whose first request (`first`) was answered by a worker or by the main process,
 * as asked: connections are opened until the kernel gave one to the wanted process.
 */
async function connectionOf(
  server: TestServer,
  wanted: 'worker' | 'main',
  first: string,
  localAddress?: string,
): Promise<{ connection: RawConnection; answer: RawAnswer; holder: number | 'main' }> {
  const port = Number(new URL(server.url).port);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const connection = await RawConnection.open({ port, localAddress });
    const answer = await connection.request(first);
    const holder = await holderOf(server, connection);
    if (holder !== undefined && (holder === 'main') === (wanted === 'main'))
      return { connection, answer, holder };
    connection.close();
  }
  throw new Error(`no connection was answered by the ${wanted} process`);
}

function claims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/** The headers of an answer apart from its date (and the tokens' own fields). */
function comparable(answer: RawAnswer): Record<string, string> {
  return Object.fromEntries(
    [...answer.headers].filter(([name]) => name !== 'date' && name !== 'content-length'),
  );
}

describe('API workers: logins and metric queries on a second process', () => {
  let server: TestServer;
  let password = 'first-password-1234';
  const opened: RawConnection[] = [];

  before(async () => {
    server = await startServer({
      config: {
        api: { workers: 1, auth: { enable: true, username: USERNAME, password } },
        // One snapshot for the whole test: both processes answer from the same one.
        metrics: { enable: true, interval_sec: 60, range_sec: 600 },
        sessions: { enable: true },
      },
      apiWorkerEntry: ENTRY,
    });
    await server.app.apiWorkers?.ready;
    assert.equal(server.app.apiWorkers?.pids().length, 1);
  });
  after(async () => {
    for (const connection of opened) connection.close();
    await server.close();
  });

  async function held(wanted: 'worker' | 'main', first: string, localAddress?: string) {
    const found = await connectionOf(server, wanted, first, localAddress);
    opened.push(found.connection);
    return found;
  }

  it('answers a login and a metric query on a worker exactly as the main process does', async () => {
    const onWorker = await held('worker', login(password));
    const onMain = await held('main', login(password));
    assert.notEqual(onWorker.holder, 'main');
    for (const { answer } of [onWorker, onMain]) assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(comparable(onWorker.answer), comparable(onMain.answer));
    const workerTokens = JSON.parse(onWorker.answer.body) as { access_token: string; refresh_token: string };
    const mainTokens = JSON.parse(onMain.answer.body) as { access_token: string; refresh_token: string };
    assert.deepEqual(Object.keys(workerTokens), Object.keys(mainTokens));
    for (const kind of ['access_token', 'refresh_token'] as const) {
      const fromWorker = claims(workerTokens[kind]);
      const fromMain = claims(mainTokens[kind]);
      assert.deepEqual(Object.keys(fromWorker), Object.keys(fromMain));
      for (const name of ['sub', 'iss', 'usefor']) assert.equal(fromWorker[name], fromMain[name], name);
    }
    // A token the worker signed opens the main process's routes, and one the main signed the worker's.
    const query = post(
      '/api/v3/metrics',
      {
        timerange_sec: 120,
        interval_sec: 60,
        metrics: [{ name: 'cpu_idle' }, { name: 'mem_total' }, { name: 'uptime_uptime' }],
      },
      mainTokens.access_token,
    );
    const fromWorker = await onWorker.connection.request(query);
    assert.equal(
      await holderOf(server, onWorker.connection),
      onWorker.holder,
      'the worker answered the query',
    );
    const fromMain = await onMain.connection.request(query);
    assert.equal(fromWorker.status, 200, fromWorker.body);
    assert.match(fromWorker.body, /"name":"cpu_idle"/);
    assert.equal(fromWorker.body, fromMain.body);
    assert.deepEqual(comparable(fromWorker), comparable(fromMain));
    const processes = await onMain.connection.request(get('/api/v3/process', workerTokens.access_token));
    assert.equal(processes.status, 200, processes.body);
    // Refresh and the catalog, too.
    const refreshed = await onWorker.connection.request(
      get('/api/login/refresh', workerTokens.refresh_token),
    );
    assert.equal(refreshed.status, 200, refreshed.body);
    const catalog = await onWorker.connection.request(get('/api/v3/metrics', workerTokens.access_token));
    assert.equal(catalog.status, 200);
    assert.equal(
      await holderOf(server, onWorker.connection),
      onWorker.holder,
      'the worker kept the connection',
    );
    // `Connection: close` is honoured: the answer, then the end of the connection.
    const closed = new Promise((resolve) => onWorker.connection.socket.once('close', resolve));
    const closing = await onWorker.connection.request(
      login(password).replace('Host: test\r\n', 'Host: test\r\nConnection: close\r\n'),
    );
    assert.equal(closing.status, 200);
    assert.equal(closing.headers.get('connection'), 'close');
    await closed;
  });

  it('answers each kind of request byte for byte as the main process, pipelined ones in order', async () => {
    // The worker builds node's request and response for what it scanned and answers on the socket
    // itself (socket-exchange.ts): what node's server and fastify derive from a head (CORS, the
    // content coding, keep-alive, the HTTP version, errors) must come out as in the main process.
    const onWorker = await held('worker', login(password));
    const onMain = await held('main', login(password));
    const { access_token: token } = JSON.parse(onMain.answer.body) as { access_token: string };
    const query = {
      timerange_sec: 300,
      interval_sec: 60,
      metrics: [{ name: 'cpu_idle' }, { name: 'mem_total' }, { name: 'mem_free' }, { name: 'uptime_uptime' }],
    };
    const withHeaders = (request: string, headers: string): string =>
      request.replace('Host: test\r\n', `Host: test\r\n${headers}`);
    const asHttp10 = (request: string): string => request.replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n');
    const variants: Record<string, string> = {
      'a query': post('/api/v3/metrics', query, token),
      'from another origin': withHeaders(
        post('/api/v3/metrics', query, token),
        'Origin: https://ui.example\r\n',
      ),
      // The catalog: several kB, over the threshold of compression.
      'gzip accepted': withHeaders(get('/api/v3/metrics', token), 'Accept-Encoding: gzip, deflate\r\n'),
      'the catalog over HTTP/1.0, kept alive': withHeaders(
        asHttp10(get('/api/v3/metrics', token)),
        'Connection: keep-alive\r\n',
      ),
      'an unknown token': post('/api/v3/metrics', query, token.slice(0, -4) + 'AAAA'),
    };
    variants['a query that is not JSON'] = post('/api/v3/metrics', query, token).replace(
      /Content-Length: \d+\r\n\r\n.*$/s,
      'Content-Length: 13\r\n\r\n{"metrics": [',
    );
    const date = /\r\nDate: [^\r]*/i;
    for (const [name, request] of Object.entries(variants)) {
      const fromWorker = await onWorker.connection.request(request);
      const fromMain = await onMain.connection.request(request);
      assert.equal(
        await holderOf(server, onWorker.connection),
        onWorker.holder,
        `${name}: the worker answered`,
      );
      assert.equal(fromWorker.head.replace(date, ''), fromMain.head.replace(date, ''), name);
      if (name === 'gzip accepted') assert.match(fromWorker.head, /\r\ncontent-encoding: gzip\r\n/i);
      assert.equal(fromWorker.body, fromMain.body, name);
    }
    // A login's head (its tokens are its own, of the same length).
    const loginFromWorker = await onWorker.connection.request(
      withHeaders(login(password), 'Origin: https://ui.example\r\n'),
    );
    const loginFromMain = await onMain.connection.request(
      withHeaders(login(password), 'Origin: https://ui.example\r\n'),
    );
    assert.equal(loginFromWorker.head.replace(date, ''), loginFromMain.head.replace(date, ''));
    // Three requests in one write: three answers, in order, from the worker.
    const pipelined = [
      post('/api/v3/metrics', query, token),
      get('/api/v3/metrics', token),
      post('/api/v3/metrics', { metrics: [{ name: 'mem_total' }] }, token),
    ];
    onWorker.connection.write(pipelined.join(''));
    const answers = [];
    for (let i = 0; i < pipelined.length; i++) answers.push(await onWorker.connection.answer());
    for (const [i, request] of pipelined.entries()) {
      const expected = await onMain.connection.request(request);
      assert.equal(answers[i]!.status, 200, answers[i]!.body);
      assert.equal(answers[i]!.body, expected.body, `pipelined answer ${i}`);
    }
    assert.equal(await holderOf(server, onWorker.connection), onWorker.holder, 'the worker answered them');
    // A body refused before it was read (a 401 for a query without a token): the main process ends
    // the connection when the refusal came before node parsed the body (http/unread-body.ts); a
    // worker has always read the whole body first, and keeps the connection, as the main process
    // does when the body was parsed first. Everything else of the answer is alike.
    const keepAliveLines = /\r\n(?:connection|keep-alive): [^\r]*/gi;
    const refusedOnWorker = await onWorker.connection.request(post('/api/v3/metrics', query));
    const refusedOnMain = await onMain.connection.request(post('/api/v3/metrics', query));
    assert.equal(refusedOnWorker.status, 401);
    assert.equal(
      refusedOnWorker.head.replace(date, '').replace(keepAliveLines, ''),
      refusedOnMain.head.replace(date, '').replace(keepAliveLines, ''),
    );
    assert.equal(refusedOnWorker.body, refusedOnMain.body);
    // HTTP/1.0 without keep-alive: the answer, then the end of the connection, as from node's server.
    const closed = new Promise((resolve) => onWorker.connection.socket.once('close', resolve));
    const last = await onWorker.connection.request(asHttp10(get('/api/v3/metrics', token)));
    const { connection: mainAgain } = await held('main', login(password));
    const lastFromMain = await mainAgain.request(asHttp10(get('/api/v3/metrics', token)));
    assert.equal(last.status, 200);
    assert.equal(last.head.replace(date, ''), lastFromMain.head.replace(date, ''));
    await closed;
  });

  it('answers what a client sent before it half-closed, then ends the connection, on either process', async () => {
    // A client may end its side right after its request (HTTP/1.1 allows it; `nc -N` does). The
    // answer of a metric query is sent a few ticks after the request was read: a worker that took
    // the client's end for a close dropped about one answer in 30, and node's server, which by
    // default aborts the requests under way at a client's end, about one in 40.
    const { connection: first } = await held('main', login(password));
    const { access_token: token } = JSON.parse((await first.request(login(password))).body) as {
      access_token: string;
    };
    const query = post('/api/v3/metrics', { metrics: [{ name: 'cpu_idle' }] }, token);
    for (const holder of ['worker', 'main'] as const) {
      for (let round = 0; round < 20; round++) {
        const { connection } = await held(holder, login(password));
        const closed = new Promise((resolve) => connection.socket.once('close', resolve));
        connection.write(query);
        connection.socket.end();
        const answer = await connection.answer();
        assert.equal(answer.status, 200, `${holder}, round ${round}: ${answer.body}`);
        await closed;
      }
    }
    // A request a worker hands to the main process with the connection, and the client's end with
    // it: a refused login, answered after the main process's failure delay, long after the end
    // (from an address of its own, so that the throttle leaves the other tests' logins alone).
    const { connection } = await held('worker', login(password), '127.0.0.3');
    const closed = new Promise((resolve) => connection.socket.once('close', resolve));
    connection.write(post('/api/login', { username: 'nobody', password: 'not-the-password' }));
    connection.socket.end();
    const refused = await connection.answer();
    assert.equal(refused.status, 401, refused.body);
    await closed;
  });

  it("counts a worker's answers in the main process's http sessions", async () => {
    // 127.0.0.2 is outside the default ignore list.
    const counted = async (): Promise<number> => {
      const answer = await fetch(`${server.url}/api/v3/session?collectors=http`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await answer.json()) as {
        http: { summary: { remote: Record<string, { local: Record<string, { sessions: number }> }> } };
      };
      return body.http.summary.remote['127.0.0.2']?.local['/api/login']?.sessions ?? 0;
    };
    const first = await held('main', login(password));
    const token = (JSON.parse(first.answer.body) as { access_token: string }).access_token;
    const before = await counted();
    const onWorker = await held('worker', login(password), '127.0.0.2');
    assert.equal(onWorker.answer.status, 200);
    const deadline = Date.now() + 10_000;
    while ((await counted()) <= before) {
      assert.ok(Date.now() < deadline, 'the login the worker answered was not counted within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('hands a request it does not answer, with the connection, to the main process', async () => {
    const onWorker = await held('worker', login(password));
    const token = (JSON.parse(onWorker.answer.body) as { access_token: string }).access_token;
    const processes = await onWorker.connection.request(get('/api/v3/process', token));
    assert.equal(processes.status, 200, processes.body);
    assert.equal(processes.body, '[]');
    assert.equal(await holderOf(server, onWorker.connection), 'main');
    // Pipelined: a login the worker answers, then a stateful route and a query behind it in one write.
    const pipelined = await held('worker', login(password));
    pipelined.connection.socket.write(
      login(password) +
        get('/api/v3/config', token) +
        post('/api/v3/metrics', { metrics: [{ name: 'cpu_idle' }] }, token),
    );
    const answers = [
      await pipelined.connection.answer(),
      await pipelined.connection.answer(),
      await pipelined.connection.answer(),
    ];
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200],
    );
    assert.match(answers[1]!.body, /"config":/);
    // A wrong password is the main process's: its throttle, its delay, its 401.
    const wrong = await held('worker', login(password));
    const refused = await wrong.connection.request(login('not-the-password'));
    assert.equal(refused.status, 401);
    assert.equal(await holderOf(server, wrong.connection), 'main');
  });

  it('answers under a new password on every worker from the next request after the reload', async () => {
    const before = await held('worker', login(password));
    const oldToken = (JSON.parse(before.answer.body) as { access_token: string }).access_token;
    const admin = await held('main', login(password));
    const config = await admin.connection.request(
      `PUT /api/v3/config HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${oldToken}\r\nContent-Type: application/json\r\nContent-Length: ${
        JSON.stringify({ version: 3, api: { auth: { password: 'second-password-5678' } } }).length
      }\r\n\r\n${JSON.stringify({ version: 3, api: { auth: { password: 'second-password-5678' } } })}`,
    );
    assert.equal(config.status, 200, config.body);
    const reload = await admin.connection.request(get('/api/v3/config/reload', oldToken));
    assert.equal(reload.status, 200, reload.body);
    const oldPassword = password;
    password = 'second-password-5678';
    // The old token is refused by the worker's guard, the new password opens the worker's login.
    const stale = await before.connection.request(post('/api/v3/metrics', { metrics: [] }, oldToken));
    assert.equal(stale.status, 401);
    assert.equal(
      await holderOf(server, before.connection),
      before.holder,
      'the worker refused the old token',
    );
    const after = await held('worker', login(password));
    assert.equal(after.answer.status, 200, after.answer.body);
    const old = await after.connection.request(login(oldPassword));
    assert.equal(old.status, 401);
  });

  it('restarts a worker that was killed, and the server answers throughout', async () => {
    const pool = server.app.apiWorkers!;
    const [killed] = pool.pids();
    process.kill(killed!, 'SIGKILL');
    const deadline = Date.now() + 60_000;
    let answered = 0;
    while (!(pool.pids().length === 1 && pool.pids()[0] !== killed)) {
      assert.ok(Date.now() < deadline, 'no new worker within 60 s');
      const answer = await fetch(`${server.url}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ username: USERNAME, password }),
      });
      assert.equal(answer.status, 200);
      await answer.arrayBuffer();
      answered++;
    }
    assert.ok(answered > 0);
    await pool.ready;
    assert.equal(pool.pids().length, 1);
    const onNew = await held('worker', login(password));
    assert.equal(onNew.answer.status, 200);
    assert.equal(onNew.holder, pool.pids()[0]);
  });
});

describe("API workers: a worker's idle connections", () => {
  const password = 'idle-password-1234';
  let server: TestServer;
  before(async () => {
    server = await startServer({
      config: {
        api: {
          workers: 1,
          auth: { enable: true, username: USERNAME, password },
          timeouts: { keepalive_sec: 2, idle_sec: 2 },
        },
      },
      apiWorkerEntry: ENTRY,
    });
    await server.app.apiWorkers?.ready;
  });
  after(() => server.close());

  const closed = (connection: RawConnection, what: string): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} stayed open for 20 s`)), 20_000);
      connection.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  it('keeps a connection that asks again within keepalive_sec, and closes a silent or stalled one', async () => {
    // keepalive_sec counts from the connection's last bytes, not from its first: requests every
    // 250 ms for 3 s outlive it.
    const { connection } = await connectionOf(server, 'worker', login(password));
    for (let asked = 0; asked < 12; asked++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.equal((await connection.request(login(password))).status, 200);
    }
    await closed(connection, 'a silent connection');

    const stalled = (await connectionOf(server, 'worker', login(password))).connection;
    const stalledClosed = closed(stalled, 'a connection with half a request');
    stalled.write('POST /api/login HTTP/1.1\r\nHost: test\r\n');
    await stalledClosed;
  });
});
