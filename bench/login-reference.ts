/**
 * `POST /api/login` against the reference server (issue 16: "login at least the reference's
 * throughput on this machine"). Both answer a username/password login with an access and a
 * refresh token (HS256).
 *
 * Method: streamcore as users run it (`node dist/main.js`; run `npm run build` first) and the
 * reference, datarhei Core v16.14.0 built from its tag outside this repository (see
 * docs/performance.md for the build command) and named by REFERENCE_CORE, each with auth on, the
 * same username and password, log level info (both defaults), data in a temporary directory, on
 * loopback. autocannon (10
 * connections) in this process pinned to CPU 0, both servers pinned to CPU 1 (taskset), so each
 * round measures one server on a core of its own. 2 s warm-up each, then ROUNDS rounds of
 * DURATION s alternating the two; medians of requests/s and of each server's CPU time per login.
 * Every answer must be a 200 with both tokens (checked on a sample, counted for all).
 *
 * Run: REFERENCE_CORE=/path/to/core node --import tsx bench/login-reference.ts
 *      (BENCH_ROUNDS=5, BENCH_DURATION=5)
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLOCK_TICKS_PER_SEC, cpuTicks, median, pinLoadAndServers } from './measure.js';
import { REFERENCE_LABEL, startReferenceCore } from './reference-core.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 5);
const WARMUP_SEC = 2;
const CONNECTIONS = 10;
const USERNAME = 'admin';
const PASSWORD = 'bench-login-password';
const LOGIN_BODY = JSON.stringify({ username: USERNAME, password: PASSWORD });

const referenceBinary = process.env.REFERENCE_CORE;
if (referenceBinary === undefined || !existsSync(referenceBinary)) {
  throw new Error('REFERENCE_CORE must name a built datarhei Core v16.14.0 binary (docs/performance.md)');
}
const root = join(import.meta.dirname, '..');
const mainFile = join(root, 'dist', 'main.js');
if (!existsSync(mainFile)) throw new Error(`${mainFile} is missing: run npm run build first`);

interface Server {
  label: string;
  url: string;
  child: ChildProcess;
}

interface Round {
  rps: number;
  cpuMicrosPerLogin: number;
  failed: number;
}

const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-login-'));
const servers: Server[] = [];
try {
  // One at a time, so a server that started is stopped even when the next one fails to.
  servers.push(await startStreamcore(dir));
  servers.push(await startReference(dir));
  const pinning = pinLoadAndServers(servers.map(({ child }) => child));
  for (const server of servers) await checkLogin(server);
  const rounds = new Map<Server, Round[]>(servers.map((server) => [server, []]));
  for (const server of servers) await run(server, WARMUP_SEC);
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of servers) rounds.get(server)!.push(await run(server, DURATION_SEC));
    process.stderr.write(
      `  round ${round + 1}: ${servers.map((s) => `${s.label} ${Math.round(rounds.get(s)!.at(-1)!.rps)} req/s`).join(', ')}\n`,
    );
  }
  const [ours, reference] = servers.map((server) => summarize(rounds.get(server)!));
  console.log(
    `POST /api/login, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_SEC} s after ${WARMUP_SEC} s warm-up, medians (node ${process.version}; ${pinning})\n`,
  );
  console.log('| server | logins/s | µs CPU per login | failed |');
  console.log('|---|---:|---:|---:|');
  for (const [server, stats] of [
    [servers[0]!, ours!],
    [servers[1]!, reference!],
  ] as const) {
    console.log(`| ${server.label} | ${Math.round(stats.rps)} | ${stats.cpu.toFixed(0)} | ${stats.failed} |`);
  }
  console.log(`\nstreamcore / reference: ${(ours!.rps / reference!.rps).toFixed(2)}× (target ≥ 1×)`);
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
  for (const { child } of servers) {
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  }
  await rm(dir, { recursive: true, force: true });
}

async function startStreamcore(base: string): Promise<Server> {
  const configFile = join(base, 'streamcore.json');
  await writeFile(
    configFile,
    JSON.stringify({
      address: '127.0.0.1:0',
      api: { auth: { enable: true, username: USERNAME, password: PASSWORD } },
      db: { dir: join(base, 'streamcore-db') },
      storage: { disk: { dir: join(base, 'streamcore-data') } },
    }),
  );
  const child = spawn(process.execPath, [mainFile], {
    cwd: root,
    env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`streamcore exited with ${code}: ${output}`)));
  });
  return { label: 'streamcore', url, child };
}

async function startReference(base: string): Promise<Server> {
  const { child, url } = await startReferenceCore(referenceBinary!, base, {
    CORE_API_AUTH_ENABLE: 'true',
    CORE_API_AUTH_USERNAME: USERNAME,
    CORE_API_AUTH_PASSWORD: PASSWORD,
  });
  return { label: REFERENCE_LABEL, url, child };
}

async function checkLogin(server: Server): Promise<void> {
  const response = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: LOGIN_BODY,
  });
  const body = (await response.json()) as { access_token?: string; refresh_token?: string };
  if (response.status !== 200 || body.access_token === undefined || body.refresh_token === undefined) {
    throw new Error(`${server.label}: login answered ${response.status} ${JSON.stringify(body)}`);
  }
}

async function run(server: Server, durationSec: number): Promise<Round> {
  const before = cpuTicks(server.child);
  const result = await autocannon({
    url: `${server.url}/api/login`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: LOGIN_BODY,
    connections: CONNECTIONS,
    duration: durationSec,
  });
  const micros = ((cpuTicks(server.child) - before) * 1_000_000) / CLOCK_TICKS_PER_SEC;
  const logins = Math.max(1, result.requests.total ?? result.requests.average * durationSec);
  return {
    rps: result.requests.average,
    cpuMicrosPerLogin: micros / logins,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

function summarize(rounds: Round[]): { rps: number; cpu: number; failed: number } {
  return {
    rps: median(rounds.map((r) => r.rps)),
    cpu: median(rounds.map((r) => r.cpuMicrosPerLogin)),
    failed: rounds.reduce((sum, r) => sum + r.failed, 0),
  };
}
