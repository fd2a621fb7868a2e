/**
 * The API from one core to two (issue 31 item 2): streamcore and the reference each run twice in
 * the same run, once confined to one core and once to two (taskset at start, so the reference's Go
 * runtime sizes GOMAXPROCS to it; streamcore with one API worker on two cores), and the same
 * requests are measured on all of them, in alternating rounds:
 * - `POST /api/login` (username and password);
 * - `GET /api/v3/process` with PROCESSES stopped processes;
 * - `POST /api/v3/metrics`, latest values of every metric, and a 110 s series of every metric
 *   (one body repeated, as a dashboard polls);
 * - `GET /memfs/live.m3u8`, the HLS viewer path (a playlist in the memory filesystem).
 *
 * Streamcore also runs on two cores without a worker (`w0`), so the workers' own share is seen apart
 * from the second core's.
 *
 * Method: the servers as users run them (`node dist/main.js`, run `npm run build:server` first; the
 * reference named by REFERENCE_CORE, see docs/performance.md), auth on, metrics every 2 s over
 * 300 s, data in a temporary directory, on loopback. The load is wrk (Debian's `wrk`: 2 threads,
 * BENCH_CONNECTIONS connections, 50 by default, as the issue measured), or autocannon in this
 * process when wrk is not installed (BENCH_LOAD=autocannon forces it; it costs about 1.5× wrk's
 * CPU per request). The load runs on CPU 0 while a one-core server runs on CPU 1, and on both CPUs
 * beside a two-core server (a two-core machine has no third core for the load: the two-core
 * figures are what is left beside it, so a ratio here is a floor; the load's own CPU per request
 * is printed too). With wrk, every round is measured twice: the load at the server's priority
 * (niceness 0) and at niceness 19, where the server runs first whenever it has work, as when the
 * load comes from elsewhere (BENCH_LOAD_NICE=0,19 by default). A table per level, then one of each
 * server at its best level. 1 s warm-up per server and route, then ROUNDS rounds of DURATION s; medians of
 * requests/s and of the server's CPU time per request (its workers' included). Every answer must
 * be a 2xx (failures are counted).
 *
 * Run: REFERENCE_CORE=/path/to/core node --import tsx bench/scaling.ts   (BENCH_ROUNDS=3, BENCH_DURATION=3;
 *      without REFERENCE_CORE only streamcore is measured)
 */
import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLOCK_TICKS_PER_SEC,
  cpuTicksOfPid,
  freePort,
  median,
  pingOnce,
  spawnBuiltServer,
} from './measure.js';
import { startReferenceCore } from './reference-core.js';
import { haveWrk, runWrk, type WrkRequest } from './wrk.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 3);
const WARMUP_SEC = 1;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** wrk (C) when it is installed, as the issue measured with; autocannon (JavaScript) otherwise. */
const LOAD = process.env.BENCH_LOAD ?? ((await haveWrk()) ? 'wrk' : 'autocannon');
if (LOAD !== 'wrk' && LOAD !== 'autocannon')
  throw new Error(`BENCH_LOAD must be wrk or autocannon, not ${LOAD}`);
/**
 * The load's niceness, each measured in turn: 0 shares the two cores with a two-core server at
 * equal priority, 19 lets the server run first whenever it has work, as when the load comes from
 * another machine. Autocannon runs in this process and only at 0.
 */
const NICE_LEVELS = (process.env.BENCH_LOAD_NICE ?? (LOAD === 'wrk' ? '0,19' : '0')).split(',').map(Number);
if (NICE_LEVELS.some((level) => !Number.isInteger(level) || level < 0 || level > 19))
  throw new Error('BENCH_LOAD_NICE must list niceness levels from 0 to 19, such as 0,19');
if (LOAD === 'autocannon' && NICE_LEVELS.some((level) => level !== 0))
  throw new Error('autocannon runs in this process: BENCH_LOAD_NICE must be 0 with it');
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
  /** Column of the table: `streamcore 2` (cores), `streamcore 2 w0` (no workers), `reference 1`. */
  label: string;
  kind: 'streamcore' | 'reference';
  cores: 1 | 2;
  url: string;
  child: ChildProcess;
  token: string;
}

interface Route {
  label: string;
  options: (server: Server) => WrkRequest;
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

function metricsQuery(server: Server, body: object): WrkRequest {
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
  servers.push(await startStreamcore(dir, 1, 0));
  // Two cores without workers: what the workers add, apart from the second core itself.
  servers.push(await startStreamcore(dir, 2, 0));
  servers.push(await startStreamcore(dir, 2, 1));
  if (referenceBinary !== undefined) {
    for (const cores of [1, 2] as const) servers.push(await startReference(dir, referenceBinary, cores));
  }
  for (const server of servers) await prepare(server);
  // Both servers have a few snapshots before the series are measured.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const results = new Map<string, number[]>();
  const failures = new Map<string, number>();
  const cpu = new Map<string, number[]>();
  const load = new Map<string, number[]>();
  for (const route of ROUTES) {
    for (const server of servers) await run(server, route, WARMUP_SEC, 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (const nice of NICE_LEVELS) {
        for (const server of servers) {
          const { rps, cpuMicros, loadMicros, failed } = await run(server, route, DURATION_SEC, nice);
          const key = `${route.label}|${server.label}|${nice}`;
          results.set(key, [...(results.get(key) ?? []), rps]);
          cpu.set(key, [...(cpu.get(key) ?? []), cpuMicros]);
          load.set(key, [...(load.get(key) ?? []), loadMicros]);
          failures.set(key, (failures.get(key) ?? 0) + failed);
        }
      }
    }
    process.stderr.write(`  ${route.label} done\n`);
  }
  for (const nice of NICE_LEVELS) print(nice, results, cpu, load);
  if (NICE_LEVELS.length > 1) printBest(results);
  const failed = [...failures].filter(([, count]) => count > 0);
  console.log(failed.length === 0 ? '\nno failed requests' : `\nfailed requests: ${JSON.stringify(failed)}`);
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
  for (const { child } of servers) {
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
  }
  await rm(dir, { recursive: true, force: true });
}

/** The ratios under each table: [column, numerator's server, denominator's server]. */
function ratioColumns(): [string, string, string][] {
  const ratios: [string, string, string][] = [
    ['streamcore 2/1', 'streamcore 2 w1', 'streamcore 1'],
    ['w1/w0 on 2', 'streamcore 2 w1', 'streamcore 2 w0'],
  ];
  if (referenceBinary !== undefined) {
    ratios.push(
      ['reference 2/1', 'reference 2', 'reference 1'],
      ['streamcore/reference on 1', 'streamcore 1', 'reference 1'],
      ['streamcore/reference on 2', 'streamcore 2 w1', 'reference 2'],
    );
  }
  return ratios;
}

/** One table: a row per route, a column per server, then the ratios of the servers' req/s. */
function printTable(
  title: string,
  measure: (route: Route, label: string) => { rps: number; cell: string },
): void {
  console.log(`\n${title}\n`);
  const labels = servers.map((server) => server.label);
  const ratios = ratioColumns();
  const header = [...labels, ...ratios.map(([name]) => name)];
  console.log(`| route | ${header.join(' | ')} |`);
  console.log(`|---|${header.map(() => '---:').join('|')}|`);
  for (const route of ROUTES) {
    const rps = (label: string): number => measure(route, label).rps;
    const cells = [
      ...labels.map((label) => measure(route, label).cell),
      ...ratios.map(([, over, under]) => `${(rps(over) / rps(under)).toFixed(2)}×`),
    ];
    console.log(`| ${route.label} | ${cells.join(' | ')} |`);
  }
}

function print(
  nice: number,
  results: Map<string, number[]>,
  cpu: Map<string, number[]>,
  load: Map<string, number[]>,
): void {
  printTable(
    `load at niceness ${nice}: req/s (µs of server CPU / µs of the load generator's CPU, per request), medians of ${ROUNDS} rounds of ${DURATION_SEC} s, ${LOAD} with ${CONNECTIONS} connections (node ${process.version}; one-core servers on CPU 1 with the load on CPU 0, two-core servers share both CPUs with the load; w0: no API worker, w1: one)`,
    (route, label) => {
      const of = (map: Map<string, number[]>): number =>
        median(map.get(`${route.label}|${label}|${nice}`) ?? [0]);
      return {
        rps: of(results),
        cell: `${Math.round(of(results))} (${Math.round(of(cpu))}/${Math.round(of(load))})`,
      };
    },
  );
}

/**
 * Each server at the load's priority that served it best (its median there): on two shared cores
 * the kernel's division of them between server and load decides as much as the server does, and
 * not alike for both servers (docs/performance.md).
 */
function printBest(results: Map<string, number[]>): void {
  printTable(
    `each server at its best of the load's niceness levels (${NICE_LEVELS.join(', ')}): req/s (niceness)`,
    (route, label) => {
      const best = NICE_LEVELS.map((nice) => ({
        rps: median(results.get(`${route.label}|${label}|${nice}`) ?? [0]),
        nice,
      })).reduce((a, b) => (b.rps > a.rps ? b : a));
      return { rps: best.rps, cell: `${Math.round(best.rps)} (${best.nice})` };
    },
  );
}

/** CPU time (user + system, clock ticks) of a server and its child processes (the API workers). */
function serverTicks(server: Server): number {
  const pid = server.child.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  // Only the workers of a streamcore server: its encoders are stopped here.
  const pids = server.kind === 'streamcore' ? [String(pid), ...children] : [String(pid)];
  return pids.reduce((sum, each) => {
    try {
      return sum + cpuTicksOfPid(each);
    } catch {
      return sum;
    }
  }, 0);
}

/** Pins this process (the load) to CPU 0 for a one-core server, to both CPUs for a two-core one. */
function pinLoad(cores: 1 | 2): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuListOfLoad(cores), String(process.pid)], {
    stdio: 'ignore',
  });
}

async function run(
  server: Server,
  route: Route,
  durationSec: number,
  nice: number,
): Promise<{ rps: number; cpuMicros: number; loadMicros: number; failed: number }> {
  const before = serverTicks(server);
  const measured =
    LOAD === 'wrk'
      ? await runWithWrk(server, route, durationSec, nice)
      : await runWithAutocannon(server, route, durationSec);
  const micros = ((serverTicks(server) - before) * 1_000_000) / CLOCK_TICKS_PER_SEC;
  return { ...measured, cpuMicros: micros / Math.max(1, measured.requests) };
}

interface LoadRun {
  rps: number;
  requests: number;
  failed: number;
  /** The load generator's CPU per request, µs (NaN where it is this process: autocannon). */
  loadMicros: number;
}

async function runWithWrk(server: Server, route: Route, durationSec: number, nice: number): Promise<LoadRun> {
  const result = await runWrk(route.options(server), {
    connections: CONNECTIONS,
    threads: 2,
    durationSec,
    cpus: cpuListOfLoad(server.cores),
    nice,
  });
  return {
    rps: result.rps,
    requests: result.requests,
    failed: result.failed,
    loadMicros: result.loadMicrosPerRequest,
  };
}

async function runWithAutocannon(server: Server, route: Route, durationSec: number): Promise<LoadRun> {
  pinLoad(server.cores);
  const before = process.cpuUsage();
  const result = await autocannon({
    ...route.options(server),
    connections: CONNECTIONS,
    duration: durationSec,
  });
  const used = process.cpuUsage(before);
  const requests = Math.max(1, result.requests.total ?? 0);
  return {
    rps: result.requests.average,
    requests,
    failed: result.non2xx + result.errors + result.timeouts,
    loadMicros: (used.user + used.system) / requests,
  };
}

/** The load's CPUs: CPU 0 beside a one-core server (on CPU 1), both beside a two-core one. */
function cpuListOfLoad(cores: 1 | 2): string {
  return cores === 1 ? '0' : '0,1';
}

function cpuList(cores: 1 | 2): string {
  return cores === 1 ? '1' : '0,1';
}

async function startStreamcore(base: string, cores: 1 | 2, workers: number): Promise<Server> {
  const label = cores === 1 ? 'streamcore 1' : `streamcore ${cores} w${workers}`;
  const home = join(base, `streamcore-${cores}-${workers}`);
  await mkdir(home, { recursive: true });
  const port = await freePort();
  const child = await spawnBuiltServer(
    home,
    {
      address: `127.0.0.1:${port}`,
      api: { workers, auth: { enable: true, username: USERNAME, password: PASSWORD } },
      storage: {
        disk: { dir: join(home, 'data') },
        memory: { auth: { enable: true, username: MEMFS_USER, password: MEMFS_PASSWORD } },
      },
      metrics: { enable: true, interval_sec: 2, range_sec: 300 },
      rtmp: { enable: false },
      srt: { enable: false },
    },
    // Under taskset from the start, so that the API workers it forks inherit the same cores.
    ['taskset', '-c', cpuList(cores)],
  );
  for (let attempt = 0; !(await pingOnce(port)); attempt++) {
    if (child.exitCode !== null) throw new Error(`streamcore exited with ${child.exitCode}`);
    if (attempt > 300) throw new Error('streamcore did not answer /ping within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The workers start after the listener: wait until one has joined (or none is expected).
  await new Promise((resolve) => setTimeout(resolve, workers === 0 ? 0 : 3000));
  return { label, kind: 'streamcore', cores, url: `http://127.0.0.1:${port}`, child, token: '' };
}

async function startReference(base: string, binary: string, cores: 1 | 2): Promise<Server> {
  const home = join(base, `reference-${cores}`);
  await mkdir(home, { recursive: true });
  const { child, url } = await startReferenceCore(binary, home, {
    CORE_API_AUTH_ENABLE: 'true',
    CORE_API_AUTH_USERNAME: USERNAME,
    CORE_API_AUTH_PASSWORD: PASSWORD,
    CORE_STORAGE_MEMORY_AUTH_ENABLE: 'true',
    CORE_STORAGE_MEMORY_AUTH_USERNAME: MEMFS_USER,
    CORE_STORAGE_MEMORY_AUTH_PASSWORD: MEMFS_PASSWORD,
    CORE_METRICS_ENABLE: 'true',
    CORE_METRICS_INTERVAL_SEC: '2',
    CORE_METRICS_RANGE_SEC: '300',
  });
  // Every thread of the Go runtime, those it makes later included (they inherit the mask).
  execFileSync('taskset', ['-a', '-p', '-c', cpuList(cores), String(child.pid)], { stdio: 'ignore' });
  return { label: `reference ${cores}`, kind: 'reference', cores, url, child, token: '' };
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
