/**
 * Throughput of the metrics API against a bare `node:http` server (docs/metrics.md).
 *
 * Method: the server under test, the baseline and a reference run in three child processes;
 * autocannon runs in this one. The streamcore server runs as users run it: auth enabled (one login, then the bearer
 * token on every API call), collection every 2 s over 300 s, Prometheus on. Its store is filled
 * with 150 real snapshots first (the collectors run 150 times on a clock advanced by 2 s each), so
 * the 300 s / 2 s time series has all its points. The baseline answers each path with a
 * precomputed body of the same bytes as streamcore's answer (same content type). The reference is
 * a bare `Fastify()` answering the same precomputed bodies: the floor of the framework streamcore
 * is built on, so a reader can tell the framework's share of a gap from streamcore's own. Per
 * endpoint: 2 s warm-up on each server, then ROUNDS rounds of DURATION s alternating the three;
 * the table shows medians of requests/s, of p99 latency and of each server's own CPU time per
 * request (utime + stime from /proc), and the ratios to the baseline. With 2 or more CPUs, autocannon is
 * pinned to CPU 0 and the servers to CPU 1 (taskset), so a server never shares its core with the
 * load generator. On the shared 2-core VM the machine's speed drifts between runs (the baseline's
 * CPU per request moved between 14 and 22 µs), so only ratios within one run are meaningful.
 *
 * Run: node --import tsx bench/metrics-api.ts
 */
import autocannon, { type Options as AutocannonOptions } from 'autocannon';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { createServer, type Server } from 'node:http';
import Fastify from 'fastify';
import { CATALOG } from '../src/monitor/store/catalog.js';
import { CLOCK_TICKS_PER_SEC, cpuTicksIn, procStatFields } from './measure.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP_SEC = 2;
/** Knobs for exploring where time goes: `BENCH_ONLY=0,1` measures only those endpoints; `BENCH_AUTH=0`, `BENCH_SESSIONS=0` turn modules off. */
const ONLY = process.env.BENCH_ONLY?.split(',').map(Number);
/** `BENCH_SHOW_ROUNDS=1` writes each round's figures (streamcore | baseline | bare Fastify) to stderr. */
const SHOW_ROUNDS = process.env.BENCH_SHOW_ROUNDS === '1';
const CONNECTIONS = 10;
const USERNAME = 'admin';
const PASSWORD = 'bench-password';

interface Endpoint {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Sends the access token. */
  authorized: boolean;
  target?: string;
}

const allMetrics = CATALOG.map(({ name }) => ({ name }));
const ENDPOINTS: Endpoint[] = [
  {
    label: 'GET /api/v3/metrics (catalog)',
    method: 'GET',
    path: '/api/v3/metrics',
    authorized: true,
  },
  {
    label: 'POST /api/v3/metrics latest, 29 metrics',
    method: 'POST',
    path: '/api/v3/metrics',
    body: JSON.stringify({ metrics: allMetrics }),
    authorized: true,
    target: '≥ 0.5×',
  },
  {
    label: 'POST /api/v3/metrics 300 s / 2 s, 29 metrics',
    method: 'POST',
    path: '/api/v3/metrics',
    body: JSON.stringify({ timerange_sec: 300, interval_sec: 2, metrics: allMetrics }),
    authorized: true,
  },
  { label: 'GET /metrics (Prometheus text)', method: 'GET', path: '/metrics', authorized: false },
  {
    label: 'POST /api/login',
    method: 'POST',
    path: '/api/login',
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
    authorized: false,
  },
];

// ---- child processes -------------------------------------------------------------------------

type ChildMessage = { ready: string; token?: string; note?: string };

if (process.argv[2] === '--streamcore') await runStreamcore();
else if (process.argv[2] === '--baseline') await runBaseline();
else if (process.argv[2] === '--fastify') await runFastifyReference();
else await main();

/** Child: the real server, auth on, store filled with 150 snapshots. */
async function runStreamcore(): Promise<void> {
  const { startServer } = await import('../test/helpers/server.js');
  let offsetMs = 0;
  const server = await startServer({
    // The tests' check of every answer against the API description is not part of the server.
    checkAnswers: false,
    now: () => Date.now() + offsetMs,
    config: {
      api: { auth: { enable: process.env.BENCH_AUTH !== '0', username: USERNAME, password: PASSWORD } },
      sessions: { enable: process.env.BENCH_SESSIONS !== '0' },
      metrics: { enable: true, enable_prometheus: true, interval_sec: 2, range_sec: 300 },
    },
  });
  for (let i = 0; i < 150; i++) {
    offsetMs += 2000;
    await server.app.monitor.collectNow();
  }
  const login = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  const message: ChildMessage = { ready: server.url };
  if (login.status === 200) message.token = ((await login.json()) as { access_token: string }).access_token;
  else message.note = `POST /api/login answered ${login.status}: API measured without a token`;
  process.send?.(message);
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
}

/** Child: a bare node:http server answering each path with a precomputed body. */
async function runBaseline(): Promise<void> {
  const bodies = receiveBodies();
  const server = createServer((request, response) => {
    const answer = bodies.get(answerKey(request.method, request.url, request.headers['x-bench-key']));
    // Read the request body like a real server would, then answer.
    request.resume();
    request.on('end', () => {
      if (answer === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': answer.type, 'content-length': answer.body.length });
      response.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  reportReady(server.address());
  process.on('disconnect', () => server.close(() => process.exit(0)));
}

/**
 * Child: the reference, a bare `Fastify()` (default options, no plugins, no hooks) answering each
 * path with the same precomputed bodies; request bodies are read as bytes, like the baseline's.
 */
async function runFastifyReference(): Promise<void> {
  const bodies = receiveBodies();
  const server = Fastify();
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  server.route({
    method: ['GET', 'POST'],
    url: '/*',
    handler: (request, reply) => {
      const answer = bodies.get(answerKey(request.method, request.url, request.headers['x-bench-key']));
      if (answer === undefined) return reply.code(404).send();
      return reply.header('content-type', answer.type).send(answer.body);
    },
  });
  await server.listen({ port: 0, host: '127.0.0.1' });
  reportReady(server.server.address());
  process.on('disconnect', () => void server.close().then(() => process.exit(0)));
}

interface PreparedAnswer {
  type: string;
  body: Buffer;
}

/** The bodies the parent sends (one message per endpoint), acknowledged one by one. */
function receiveBodies(): Map<string, PreparedAnswer> {
  const bodies = new Map<string, PreparedAnswer>();
  process.on('message', (message: { key: string; type: string; body: string }) => {
    bodies.set(message.key, { type: message.type, body: Buffer.from(message.body, 'base64') });
    process.send?.({ stored: message.key });
  });
  return bodies;
}

function answerKey(
  method: string | undefined,
  url: string | undefined,
  benchKey: string | string[] | undefined,
): string {
  return `${method ?? ''} ${url ?? ''} ${typeof benchKey === 'string' ? benchKey : ''}`;
}

function reportReady(address: ReturnType<Server['address']>): void {
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  process.send?.({ ready: `http://127.0.0.1:${port}` });
}

// ---- measurement -----------------------------------------------------------------------------

async function main(): Promise<void> {
  const streamcore = fork(import.meta.filename, ['--streamcore'], { execArgv: ['--import', 'tsx'] });
  const baseline = fork(import.meta.filename, ['--baseline'], { execArgv: ['--import', 'tsx'] });
  const reference = fork(import.meta.filename, ['--fastify'], { execArgv: ['--import', 'tsx'] });
  try {
    const ours = await nextMessage<ChildMessage>(streamcore);
    const bare = await nextMessage<ChildMessage>(baseline);
    const floor = await nextMessage<ChildMessage>(reference);
    const notes: string[] = [];
    notes.push(pinToCores(streamcore, baseline, reference));
    if (ours.note !== undefined) notes.push(ours.note);
    const rows: string[] = [];
    for (const [index, endpoint] of ENDPOINTS.entries()) {
      if (ONLY !== undefined && !ONLY.includes(index)) continue;
      const headers: Record<string, string> = {};
      if (endpoint.body !== undefined) headers['content-type'] = 'application/json';
      if (endpoint.authorized && ours.token !== undefined) headers.authorization = `Bearer ${ours.token}`;
      const sample = await fetch(`${ours.ready}${endpoint.path}`, {
        method: endpoint.method,
        headers,
        body: endpoint.body,
      });
      const body = Buffer.from(await sample.arrayBuffer());
      if (sample.status !== 200) {
        notes.push(`${endpoint.label}: answered ${sample.status}, not measured`);
        continue;
      }
      const key = String(index);
      for (const child of [baseline, reference]) {
        child.send({
          key: `${endpoint.method} ${endpoint.path} ${key}`,
          type: sample.headers.get('content-type'),
          body: body.toString('base64'),
        });
        await nextMessage(child);
      }
      const oursOptions = {
        url: `${ours.ready}${endpoint.path}`,
        method: endpoint.method,
        headers,
        body: endpoint.body,
      };
      const servers = [
        { child: streamcore, options: oursOptions, rounds: [] as Round[] },
        { child: baseline, options: precomputedAt(bare.ready, oursOptions, key), rounds: [] as Round[] },
        { child: reference, options: precomputedAt(floor.ready, oursOptions, key), rounds: [] as Round[] },
      ];
      for (const server of servers) await run(server.options, WARMUP_SEC, server.child);
      for (let round = 0; round < ROUNDS; round++) {
        for (const server of servers)
          server.rounds.push(await run(server.options, DURATION_SEC, server.child));
        if (SHOW_ROUNDS) {
          const line = servers.map(({ rounds }) => {
            const last = rounds[rounds.length - 1];
            if (last === undefined) return '-';
            const cpu = `${last.cpuMicrosPerRequest.toFixed(1)} µs (user ${last.userMicrosPerRequest.toFixed(1)})`;
            return `${Math.round(last.rps)} req/s ${cpu}`;
          });
          process.stderr.write(`  round ${round + 1}: ${line.join(' | ')}\n`);
        }
      }
      const [oursStats, bareStats, floorStats] = servers.map(({ rounds }) => summarize(rounds));
      if (oursStats === undefined || bareStats === undefined || floorStats === undefined) continue;
      rows.push(
        `| ${endpoint.label} | ${body.length} | ${Math.round(oursStats.rps)} | ${oursStats.p99} | ` +
          `${oursStats.cpu.toFixed(1)} | ${Math.round(bareStats.rps)} | ${bareStats.p99} | ${bareStats.cpu.toFixed(1)} | ` +
          `${(oursStats.rps / bareStats.rps).toFixed(2)}× | ${(bareStats.cpu / oursStats.cpu).toFixed(2)}× | ` +
          `${(floorStats.rps / bareStats.rps).toFixed(2)}× | ${(bareStats.cpu / floorStats.cpu).toFixed(2)}× | ${endpoint.target ?? ''} |`,
      );
      const failed = servers[0]?.rounds.reduce((sum, r) => sum + r.failed, 0) ?? 0;
      if (failed > 0) notes.push(`${endpoint.label}: ${failed} non-2xx answers or errors`);
    }
    console.log(
      `Metrics API vs bare node:http, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_SEC} s after ${WARMUP_SEC} s warm-up, medians (node ${process.version})\n`,
    );
    console.log(
      '| endpoint | body bytes | streamcore req/s | p99 ms | µs CPU/req | baseline req/s | p99 ms | µs CPU/req | ratio req/s | ratio CPU/req | bare Fastify: ratio req/s | ratio CPU/req | target |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
    for (const row of rows) console.log(row);
    if (notes.length > 0) console.log(`\n${notes.map((note) => `- ${note}`).join('\n')}`);
  } finally {
    streamcore.disconnect();
    baseline.disconnect();
    reference.disconnect();
  }
}

/** The same request sent to a server of precomputed bodies, naming the body it should answer. */
function precomputedAt(baseUrl: string, options: AutocannonOptions, key: string): AutocannonOptions {
  const url = new URL(options.url);
  return {
    ...options,
    url: `${baseUrl}${url.pathname}`,
    headers: { ...options.headers, 'x-bench-key': key },
  };
}

/** Medians of a server's rounds. */
function summarize(rounds: Round[]): { rps: number; p99: number; cpu: number } {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p99: median(rounds.map((r) => r.p99)),
    cpu: median(rounds.map((r) => r.cpuMicrosPerRequest)),
  };
}

/**
 * Pins the load generator to the first CPU and the servers to the second (all their threads), so
 * that each round measures a server on a core of its own rather than how the scheduler happened to
 * share two cores between client and server (unpinned, the same code measured 0.72–0.89×).
 */
function pinToCores(...servers: ChildProcess[]): string {
  if (availableParallelism() < 2) return 'not pinned: fewer than 2 CPUs';
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    for (const server of servers) {
      execFileSync('taskset', ['-a', '-p', '-c', '1', String(server.pid)], { stdio: 'ignore' });
    }
    return 'autocannon pinned to CPU 0, the servers to CPU 1 (taskset)';
  } catch (error) {
    return `not pinned: ${(error as Error).message}`;
  }
}

interface Round {
  rps: number;
  p99: number;
  failed: number;
  /** The server's own CPU time (user + system) per answered request, microseconds. */
  cpuMicrosPerRequest: number;
  /** Its user-mode share. */
  userMicrosPerRequest: number;
}

/** Load on `options.url` for `durationSec`, with the CPU time the serving process spent meanwhile. */
async function run(options: AutocannonOptions, durationSec: number, server: ChildProcess): Promise<Round> {
  const cpuBefore = cpuTicks(server);
  const userBefore = cpuTicks(server, 'user');
  const result = await autocannon({
    ...options,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: durationSec,
  });
  const cpuMicros = ((cpuTicks(server) - cpuBefore) * 1_000_000) / CLOCK_TICKS_PER_SEC;
  const userMicros = ((cpuTicks(server, 'user') - userBefore) * 1_000_000) / CLOCK_TICKS_PER_SEC;
  const requests = Math.max(1, result.requests.total ?? result.requests.average * durationSec);
  return {
    rps: result.requests.average,
    p99: result.latency.p99,
    failed: result.non2xx + result.errors + result.timeouts,
    cpuMicrosPerRequest: cpuMicros / requests,
    userMicrosPerRequest: userMicros / requests,
  };
}

/** utime + stime (or utime alone) of a process (all its threads), in clock ticks, from /proc/<pid>/stat. */
function cpuTicks(child: ChildProcess, which: 'all' | 'user' = 'all'): number {
  const fields = procStatFields(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
  return which === 'all' ? cpuTicksIn(fields) : Number(fields[11]);
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`benchmark child exited with ${code}`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
