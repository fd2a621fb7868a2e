/**
 * The API from one core to two (issue 31 item 2): streamcore and the reference each run twice in
 * the same run, once confined to one core and once to two (taskset at start, so the reference's Go
 * runtime sizes GOMAXPROCS to it streamcore's `api.workers` is the cores but one), and the same
 * requests are measured on all four, in alternating rounds:
 * - `POST /api/login` (username and password);
 * - `GET /api/v3/process` with PROCESSES stopped processes;
 * - `POST /api/v3/metrics`, latest values of every metric, and a 110 s series of every metric
 *   (one body repeated, as a dashboard polls);
 * - `GET /memfs/live.m3u8`, the HLS viewer path (a playlist in the memory filesystem).
 *
 * Method: the servers as users run them (`node dist/main.js`, run `npm run build:server` first; the
 * reference named by REFERENCE_CORE, see docs/performance.md), auth on, metrics every 2 s over
 * 300 s, data in a temporary directory, on loopback. autocannon (CONNECTIONS connections) in this
 * process: on CPU 0 while a one-core server runs on CPU 1; on both CPUs beside a two-core server
 * (a two-core machine has no third core for the load: the two-core figures are what is left
 * beside it, so a ratio here is a floor). 1 s warm-up per server and route, then ROUNDS rounds of
 * DURATION s; medians of requests/s. Every answer must be a 2xx (failures are counted).
 *
 * Run: REFERENCE_CORE=/path/to/core node --import tsx bench/scaling.ts   (BENCH_ROUNDS=3, BENCH_DURATION=3;
 *      without REFERENCE_CORE only streamcore is measured)
 */
import autocannon, { type Options as AutocannonOptions } from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, median, referenceEnvironment, startBuiltStreamcore, waitForReference } from './measure.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 3);
const WARMUP_SEC = 1;
const CONNECTIONS = 20;
const PROCESSES = 20;
const USERNAME = 'admin';
const PASSWORD = 'bench-scaling-password';
const MEMFS_USER = 'bench';
const MEMFS_PASSWORD = 'bench-memfs-password';

const root = join(import.meta.dirname, '..');
const mainFile = join(root, 'dist', 'main.js');
if (!existsSync(mainFile)) throw new Error(`${mainFile} is missing: run npm run build:server first`);
if (availableParallelism() < 2) throw new Error('scaling needs two CPUs');
const referenceBinary = process.env.REFERENCE_CORE;
if (referenceBinary !== undefined && !existsSync(referenceBinary))
  throw new Error(`${referenceBinary} is missing`);

interface Server {
  kind: 'streamcore' | 'reference';
  cores: 1 | 2;
  url: string;
  child: ChildProcess;
  token: string;
}

interface Route {
  label: string;
  options: (server: Server) => AutocannonOptions;
}

const METRIC_NAMES = [
  'cpu_idle',
  'cpu_ncpu',
  'cpu_system',
  'cpu_user',
  'mem_free',
  'mem_total',
  'disk_total',
  'disk_usage',
  'net_rx',
  'net_tx',
  'uptime_uptime',
];

const ROUTES: Route[] = [
  {
    label: 'POST /api/login',
    options: (server) => ({
      url: `${server.url}/api/login`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
    }),
  },
  {
    label: `GET /api/v3/process (${PROCESSES})`,
    options: (server) => ({
      url: `${server.url}/api/v3/process`,
      headers: { authorization: `Bearer ${server.token}` },
    }),
  },
  {
    label: 'metrics: latest values',
    options: (server) => metricsQuery(server, { metrics: METRIC_NAMES.map((name) => ({ name })) }),
  },
  {
    label: 'metrics: 110 s series',
    options: (server) =>
      metricsQuery(server, {
        timerange_sec: 110,
        interval_sec: 2,
        metrics: METRIC_NAMES.map((name) => ({ name })),
      }),
  },
  { label: 'GET /memfs/live.m3u8', options: (server) => ({ url: `${server.url}/memfs/live.m3u8` }) },
];

function metricsQuery(server: Server, body: object): AutocannonOptions {
  return {
    url: `${server.url}/api/v3/metrics`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
    body: JSON.stringify(body),
  };
}

const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-scaling-'));
const servers: Server[] = [];
try {
  for (const cores of [1, 2] as const) {
    servers.push(await startStreamcore(dir, cores));
    if (referenceBinary !== undefined) servers.push(await startReference(dir, referenceBinary, cores));
  }
  for (const server of servers) await prepare(server);
  // Both servers have a few snapshots before the series are measured.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const results = new Map<string, number[]>();
  const failures = new Map<string, number>();
  for (const route of ROUTES) {
    for (const server of servers) await run(server, route, WARMUP_SEC);
    for (let round = 0; round < ROUNDS; round++) {
      for (const server of servers) {
        const { rps, failed } = await run(server, route, DURATION_SEC);
        const key = `${route.label}|${server.kind}|${server.cores}`;
        results.set(key, [...(results.get(key) ?? []), rps]);
        failures.set(key, (failures.get(key) ?? 0) + failed);
      }
    }
    process.stderr.write(`  ${route.label} done\n`);
  }
  print(results, failures);
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
  for (const { child } of servers) {
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
  }
  await rm(dir, { recursive: true, force: true });
}

function print(results: Map<string, number[]>, failures: Map<string, number>): void {
  const kinds = referenceBinary === undefined ? ['streamcore'] : ['streamcore', 'reference'];
  console.log(
    `\nreq/s, medians of ${ROUNDS} rounds of ${DURATION_SEC} s, ${CONNECTIONS} connections (node ${process.version}; one-core servers on CPU 1 with the load on CPU 0, two-core servers share both CPUs with the load)\n`,
  );
  const header = kinds.flatMap((kind) => [`${kind} 1 core`, `${kind} 2 cores`, `${kind} 2/1`]);
  console.log(
    `| route | ${header.join(' | ')} |${kinds.length > 1 ? ' streamcore / reference, 1 core | 2 cores |' : ''}`,
  );
  console.log(`|---|${header.map(() => '---:').join('|')}|${kinds.length > 1 ? '---:|---:|' : ''}`);
  for (const route of ROUTES) {
    const at = (kind: string, cores: number): number =>
      median(results.get(`${route.label}|${kind}|${cores}`) ?? [0]);
    const cells = kinds.flatMap((kind) => [
      Math.round(at(kind, 1)).toString(),
      Math.round(at(kind, 2)).toString(),
      `${(at(kind, 2) / at(kind, 1)).toFixed(2)}×`,
    ]);
    const versus =
      kinds.length > 1
        ? ` ${(at('streamcore', 1) / at('reference', 1)).toFixed(2)}× | ${(at('streamcore', 2) / at('reference', 2)).toFixed(2)}× |`
        : '';
    console.log(`| ${route.label} | ${cells.join(' | ')} |${versus}`);
  }
  const failed = [...failures].filter(([, count]) => count > 0);
  console.log(failed.length === 0 ? '\nno failed requests' : `\nfailed requests: ${JSON.stringify(failed)}`);
}

/** Pins this process (the load) to CPU 0 for a one-core server, to both CPUs for a two-core one. */
function pinLoad(cores: 1 | 2): void {
  execFileSync('taskset', ['-a', '-p', '-c', cores === 1 ? '0' : '0,1', String(process.pid)], {
    stdio: 'ignore',
  });
}

async function run(
  server: Server,
  route: Route,
  durationSec: number,
): Promise<{ rps: number; failed: number }> {
  pinLoad(server.cores);
  const result = await autocannon({
    ...route.options(server),
    connections: CONNECTIONS,
    duration: durationSec,
  });
  return { rps: result.requests.average, failed: result.non2xx + result.errors + result.timeouts };
}

function cpuList(cores: 1 | 2): string {
  return cores === 1 ? '1' : '0,1';
}

async function startStreamcore(base: string, cores: 1 | 2): Promise<Server> {
  const home = join(base, `streamcore-${cores}`);
  await mkdir(home, { recursive: true });
  const configFile = join(home, 'config.json');
  await writeFile(
    configFile,
    JSON.stringify({
      address: '127.0.0.1:0',
      // One worker per core but one.
      api: { workers: cores - 1, auth: { enable: true, username: USERNAME, password: PASSWORD } },
      db: { dir: join(home, 'db') },
      storage: {
        disk: { dir: join(home, 'data') },
        memory: { auth: { enable: true, username: MEMFS_USER, password: MEMFS_PASSWORD } },
      },
      metrics: { enable: true, interval_sec: 2, range_sec: 300 },
      rtmp: { enable: false },
      srt: { enable: false },
    }),
  );
  const { url, child } = await startBuiltStreamcore(root, configFile, ['taskset', '-c', cpuList(cores)]);
  // The workers start after the listener: wait until one has joined (or none is expected).
  await new Promise((resolve) => setTimeout(resolve, cores === 1 ? 0 : 3000));
  return { kind: 'streamcore', cores, url, child, token: '' };
}

async function startReference(base: string, binary: string, cores: 1 | 2): Promise<Server> {
  const port = await freePort();
  const home = join(base, `reference-${cores}`);
  await mkdir(home, { recursive: true });
  const child = spawn('taskset', ['-c', cpuList(cores), binary], {
    cwd: home,
    env: {
      ...referenceEnvironment(binary, home, port, { username: USERNAME, password: PASSWORD }),
      CORE_STORAGE_MEMORY_AUTH_ENABLE: 'true',
      CORE_STORAGE_MEMORY_AUTH_USERNAME: MEMFS_USER,
      CORE_STORAGE_MEMORY_AUTH_PASSWORD: MEMFS_PASSWORD,
      CORE_METRICS_ENABLE: 'true',
      CORE_METRICS_INTERVAL_SEC: '2',
      CORE_METRICS_RANGE_SEC: '300',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForReference(url, child);
  return { kind: 'reference', cores, url, child, token: '' };
}

/** Logs in, creates the stopped processes and the playlist. */
async function prepare(server: Server): Promise<void> {
  const login = await fetch(`${server.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  const tokens = (await login.json()) as { access_token?: string };
  if (login.status !== 200 || tokens.access_token === undefined)
    throw new Error(`${server.kind}: login answered ${login.status}`);
  server.token = tokens.access_token;
  for (let i = 0; i < PROCESSES; i++) {
    const created = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
      body: JSON.stringify({
        id: `bench-${i}`,
        reference: `bench-${i}`,
        input: [{ id: 'in', address: 'testsrc=size=320x240:rate=25', options: ['-f', 'lavfi'] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
        options: ['-loglevel', 'info'],
        autostart: false,
      }),
    });
    if (created.status !== 200) throw new Error(`${server.kind}: process create answered ${created.status}`);
    await created.arrayBuffer();
  }
  const playlist = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nlive0.ts\n';
  const put = await fetch(`${server.url}/memfs/live.m3u8`, {
    method: 'PUT',
    headers: { authorization: `Basic ${Buffer.from(`${MEMFS_USER}:${MEMFS_PASSWORD}`).toString('base64')}` },
    body: playlist,
  });
  if (put.status >= 300) throw new Error(`${server.kind}: memfs PUT answered ${put.status}`);
}
