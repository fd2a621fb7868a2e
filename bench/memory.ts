/**
 * Memory under a varying query load (issue 16): the RSS of the server after BENCH_MINUTES of
 * metrics series queries whose body differs on every request, against the RSS of the same server
 * idle with a full window, and next to Node's own floor (a bare `node:http` process answering the
 * same bytes), so the part that is streamcore's is visible.
 *
 * Method: the server runs as users run it, `node dist/main.js` (build first: `npm run build`), with
 * auth on, collection every 2 s over 300 s and three supervised processes (lavfi `testsrc`, `-re`,
 * null output), as in the issue's measurement. Idle: the window fills for BENCH_IDLE_SEC (300 s,
 * the whole window, by default) without a request; the figure is the median of 5 RSS readings one
 * second apart. Load: autocannon with 10 connections sending the `100–120 s / 2 s series of all
 * 29 metrics` query of bench/metrics-varied.ts (random `timerange_sec`, random metric order),
 * RSS read every 30 s; the end figure is the median of the last three readings (one reading can
 * land just before a garbage collection). The floor is a bare `node:http` server in plain Node (no
 * loader, no imports beyond node:http) answering the same answer bytes, read after 5 s of the same
 * load. Both are broken down by where the RSS is (bench/rss-breakdown.ts: mapped files, V8's heap and
 * other anonymous memory, JIT code, glibc's malloc arenas), and the server's CPU time under load is
 * printed per request, with its part in the kernel (page faults, mmap: what malloc tuning costs).
 *
 * Run: npm run build && node --import tsx bench/memory.ts   (BENCH_MINUTES=10, BENCH_IDLE_SEC=300)
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLOCK_TICKS_PER_SEC, cpuTicks, median, minorFaults, systemCpuTicks } from './measure.js';
import { rssBreakdown, type RssBreakdown } from './rss-breakdown.js';
import { CATALOG } from '../src/monitor/store/catalog.js';
import { readStartScript } from '../scripts/start-script.js';

const MINUTES = Number(process.env.BENCH_MINUTES ?? 10);
const IDLE_SEC = Number(process.env.BENCH_IDLE_SEC ?? 300);
const READ_EVERY_SEC = 30;
const CONNECTIONS = 10;
const TARGET_RATIO = 1.2;
const PROCESSES = 3;
const USERNAME = 'admin';
const PASSWORD = 'bench-memory-password';
/**
 * Node/V8 flags for the server: by default those `npm start` gives it (the server as users run it);
 * `BENCH_SERVER_FLAGS` replaces them to compare settings (`BENCH_SERVER_FLAGS=' '` for none).
 */
const SERVER_FLAGS =
  process.env.BENCH_SERVER_FLAGS === undefined
    ? readStartScript().flags
    : process.env.BENCH_SERVER_FLAGS.split(' ').filter((flag) => flag !== '');

/** Plain Node, nothing loaded but node:http: answers every request with the bytes it is sent. */
const FLOOR_SOURCE = `
const { createServer } = require('node:http');
let answer = { type: 'application/json', body: Buffer.alloc(0) };
process.on('message', (m) => { answer = { type: m.type, body: Buffer.from(m.body, 'base64') }; process.send('stored'); });
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': answer.type, 'content-length': answer.body.length });
    response.end(answer.body);
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

const names = CATALOG.map(({ name }) => name);

function shuffled<T>(values: readonly T[]): T[] {
  const copy = [...values];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

function variedSeriesBody(): string {
  return JSON.stringify({
    timerange_sec: 100 + Math.floor(Math.random() * 21),
    interval_sec: 2,
    metrics: shuffled(names).map((name) => ({ name })),
  });
}

const root = join(import.meta.dirname, '..');
const mainFile = join(root, 'dist', 'main.js');
if (!existsSync(mainFile)) throw new Error(`${mainFile} is missing: run npm run build first`);
const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-memory-'));
const configFile = join(dir, 'config.json');
await writeFile(
  configFile,
  JSON.stringify({
    address: '127.0.0.1:0',
    // Tokens outlive the run: the bench measures memory, not re-login.
    api: { auth: { enable: true, username: USERNAME, password: PASSWORD, jwt: { access_ttl_sec: 7200 } } },
    db: { dir: join(dir, 'db') },
    storage: { disk: { dir: join(dir, 'data') } },
    metrics: { enable: true, interval_sec: 2, range_sec: 300 },
  }),
);
const server = await startServer(mainFile, configFile);
let floor: { url: string; child: ChildProcess } | undefined;
try {
  floor = await startFloor();
  const token = await login(server.url);
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  for (let i = 0; i < PROCESSES; i++) {
    const created = await fetch(`${server.url}/api/v3/process`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        id: `memory-${i}`,
        input: [{ id: 'in', address: 'testsrc=size=32x32:rate=5', options: ['-re', '-f', 'lavfi'] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
        autostart: true,
      }),
    });
    if (created.status !== 200)
      throw new Error(`creating a process answered ${created.status}: ${await created.text()}`);
  }

  process.stderr.write(`filling the window for ${IDLE_SEC} s without requests\n`);
  await sleep(IDLE_SEC * 1000);
  const idle = await medianRss(server.child, 5);
  const idleParts = rssBreakdown(server.child.pid!);
  process.stderr.write(`idle server with a full window: ${mib(idle)}\n`);

  // The first query after the idle phase encodes the whole window's fragments; on a busy machine it
  // can run over the query time budget (503), which the table reports.
  let sample: Response | undefined;
  let body = Buffer.alloc(0);
  const firstQueries: string[] = [];
  for (let attempt = 0; attempt < 10 && sample?.status !== 200; attempt++) {
    const started = performance.now();
    sample = await fetch(`${server.url}/api/v3/metrics`, {
      method: 'POST',
      headers,
      body: variedSeriesBody(),
    });
    body = Buffer.from(await sample.arrayBuffer());
    firstQueries.push(`${sample.status} in ${(performance.now() - started).toFixed(0)} ms`);
  }
  if (sample?.status !== 200) throw new Error(`the series query answered ${sample?.status}: ${String(body)}`);
  floor.child.send({ type: sample.headers.get('content-type'), body: body.toString('base64') });
  await nextMessage(floor.child);
  await autocannon({
    url: `${floor.url}/api/v3/metrics`,
    method: 'POST',
    headers,
    body: body.toString(),
    connections: CONNECTIONS,
    duration: 5,
  });
  const floorRss = await medianRss(floor.child, 5);
  const floorParts = rssBreakdown(floor.child.pid!);

  const readings: Array<{ minute: number; rss: number }> = [];
  let requests = 0;
  let failed = 0;
  let loadParts = rssBreakdown(server.child.pid!);
  const started = Date.now();
  const cpuBefore = cpuTicks(server.child);
  const systemBefore = systemCpuTicks(server.child);
  const faultsBefore = minorFaults(server.child);
  const deadline = started + MINUTES * 60_000;
  while (Date.now() < deadline) {
    const seconds = Math.max(1, Math.min(READ_EVERY_SEC, Math.ceil((deadline - Date.now()) / 1000)));
    const result = await autocannon({
      url: `${server.url}/api/v3/metrics`,
      requests: [
        { method: 'POST', headers, setupRequest: (request) => ({ ...request, body: variedSeriesBody() }) },
      ],
      connections: CONNECTIONS,
      duration: seconds,
    });
    requests += result.requests.total ?? 0;
    failed += result.non2xx + result.errors + result.timeouts;
    const rss = rssBytes(server.child);
    loadParts = rssBreakdown(server.child.pid!);
    readings.push({ minute: (Date.now() - started) / 60_000, rss });
    process.stderr.write(`  ${readings.at(-1)!.minute.toFixed(1)} min: ${mib(rss)}, ${requests} requests\n`);
  }
  const cpuSeconds = (cpuTicks(server.child) - cpuBefore) / CLOCK_TICKS_PER_SEC;
  const systemSeconds = (systemCpuTicks(server.child) - systemBefore) / CLOCK_TICKS_PER_SEC;
  const faults = minorFaults(server.child) - faultsBefore;
  const end = median(readings.slice(-3).map(({ rss }) => rss));
  const peak = Math.max(...readings.map(({ rss }) => rss));

  console.log(
    `RSS under ${MINUTES} min of varied series queries (${CONNECTIONS} connections, ${requests} requests, ${failed} failed; ${PROCESSES} processes; node ${process.version})\n`,
  );
  console.log('| process | RSS | ratio to idle streamcore | target |');
  console.log('|---|---:|---:|---|');
  console.log(
    `| bare node:http (Node's floor), same answer bytes | ${mib(floorRss)} | ${(floorRss / idle).toFixed(2)}× | |`,
  );
  console.log(`| streamcore idle, full 300 s window | ${mib(idle)} | 1.00× | |`);
  console.log(
    `| streamcore after ${MINUTES} min of load (median of last 3 readings) | ${mib(end)} | ${(end / idle).toFixed(2)}× | ≤ ${TARGET_RATIO}× |`,
  );
  console.log(`| streamcore peak reading under load | ${mib(peak)} | ${(peak / idle).toFixed(2)}× | |`);
  console.log(`\nFirst series queries after the idle phase: ${firstQueries.join(', ')}.`);
  console.log(
    `Server CPU under load: ${cpuSeconds.toFixed(1)} s in ${MINUTES} min (${systemSeconds.toFixed(1)} s of it in the kernel), ${((cpuSeconds / requests) * 1e6).toFixed(0)} µs per request; ${(faults / requests).toFixed(2)} minor page faults per request.`,
  );
  console.log(
    '\nWhere the RSS is (/proc/<pid>/smaps, bench/rss-breakdown.ts; under load: the last reading)\n',
  );
  console.log('| part | floor under load | idle | under load | growth |');
  console.log('|---|---:|---:|---:|---:|');
  const parts: Array<[keyof RssBreakdown, string]> = [
    ['files', 'mapped files (node binary, libraries)'],
    ['otherAnonymous', "anonymous: V8's heap pages, large malloc blocks, stacks"],
    ['executable', 'anonymous executable (JIT code)'],
    ['mainArena', 'glibc main malloc arena (`[heap]`)'],
    ['threadArenas', 'glibc thread malloc arenas'],
  ];
  for (const [key, label] of parts) {
    console.log(
      `| ${label} | ${mib(floorParts[key])} | ${mib(idleParts[key])} | ${mib(loadParts[key])} | ${mib(loadParts[key] - idleParts[key])} |`,
    );
  }
} finally {
  server.child.kill('SIGTERM');
  floor?.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  await rm(dir, { recursive: true, force: true });
}

function startServer(mainFile: string, configFile: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...SERVER_FLAGS, mainFile], {
    cwd: root,
    env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match?.[1] !== undefined) resolve({ url: match[1], child });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

async function startFloor(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', FLOOR_SOURCE], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const { port } = await nextMessage<{ port: number }>(child);
  return { url: `http://127.0.0.1:${port}`, child };
}

async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: PASSWORD }),
  });
  if (response.status !== 200) throw new Error(`login answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

function rssBytes(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS for process ${child.pid}`);
  return Number(match[1]) * 1024;
}

async function medianRss(child: ChildProcess, readings: number): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < readings; i++) {
    values.push(rssBytes(child));
    await sleep(1000);
  }
  return median(values);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => child.once('message', resolve as never));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
