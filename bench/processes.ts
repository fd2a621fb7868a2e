/**
 * Scale check of process supervision (docs/processes.md#the-contract): many concurrent
 * ffmpeg processes supervised for a minute, with the server's own CPU use and the latency of the
 * metrics query and of the process list.
 *
 * Method: the server runs as its own child process (`node --import tsx src/main.ts`, as users run
 * it, metrics collected every 2 s), so its CPU time can be read from /proc/<pid>/stat apart from
 * this driver's and from the encoders'. Two phases are measured the same way:
 * - baseline: the same server with no process, 3 rounds of 5 s;
 * - load: BENCH_PROCESSES processes (lavfi `testsrc=size=32x32:rate=5`, `-re`, to `-f null`),
 *   all running; 10 s warm-up, then BENCH_SECONDS seconds in 6 equal rounds.
 * In every round the server's CPU (percent of one core) is measured over the round, and each of
 * the three requests below is sent QUERIES_PER_ROUND times, one at a time, spread over the round.
 * The table shows, per phase, the median of the rounds' CPU and the median and p95 of all
 * latencies, and the ratio load / baseline. The list is asked for every half second, so the
 * server answers it ahead at each second (list-answers.ts); after the load phase it is asked for
 * COLD_LIST_REQUESTS more times, COLD_LIST_SPACING_SEC apart, when nothing was answered ahead and
 * every state is encoded and the list deflated on request (the row "first in 3.5 s").
 *
 * A latency is the time from sending the request to the last byte of the answer, on one kept-alive
 * `node:http` connection, with `accept-encoding: gzip` as browsers and Node's `fetch` send it. The
 * driver's own work on the answer (gunzip and UTF-8 decoding, 6–14 ms for the 0.9–1.4 MB answers
 * with 200 processes while the encoders keep the CPUs busy) comes after the clock stops and is
 * shown in its own column: until 26 Nov 2026 the driver used `fetch` and `response.text()`, whose
 * streaming decompression and decoding were counted in the latency and made up about half of the
 * list's figure and most of the latest query's (docs/performance.md#a-full-server). Every answer
 * is still decompressed, decoded and checked for status 200. At the end the run checks that every process still
 * runs at its source rate, then stops the server with SIGTERM (which stops all encoders) and
 * reports how long that took.
 *
 * Run: node --import tsx bench/processes.ts   (BENCH_PROCESSES=50 BENCH_SECONDS=60 by default)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CLOCK_TICKS_PER_SEC, cpuTicksOfPid } from './measure.js';

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 50);
const SUPERVISE_SEC = Number(process.env.BENCH_SECONDS ?? 60);
const ROUNDS = 6;
const BASELINE_ROUNDS = 3;
const BASELINE_ROUND_SEC = 5;
const WARMUP_SEC = 10;
const QUERIES_PER_ROUND = 10;
const SOURCE_FPS = 5;
/** Longer than the server answers a list ahead after it was last asked for (list-answers.ts, WARM_MS). */
const COLD_LIST_SPACING_SEC = 3.5;
const COLD_LIST_REQUESTS = 8;
const LIST_PATH = '/api/v3/process';

const REQUESTS = [
  {
    label: 'POST /api/v3/metrics latest restream_process + restream_io (all processes)',
    method: 'POST',
    path: '/api/v3/metrics',
    body: JSON.stringify({ metrics: [{ name: 'restream_process' }, { name: 'restream_io' }] }),
  },
  {
    label: 'POST /api/v3/metrics 60 s / 2 s of fps (all processes)',
    method: 'POST',
    path: '/api/v3/metrics',
    body: JSON.stringify({
      timerange_sec: 60,
      interval_sec: 2,
      metrics: [{ name: 'restream_process', labels: { name: '^fps$' } }],
    }),
  },
  { label: 'GET /api/v3/process (config, state, report)', method: 'GET', path: LIST_PATH },
] as const;

interface PhaseResult {
  cpuPercent: number[];
  latencies: number[][];
  /** The driver's gunzip and decoding of each answer, after the clock stopped, ms. */
  decoding: number[][];
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-processes-'));
  const configFile = join(dir, 'config.json');
  await writeFile(
    configFile,
    JSON.stringify({
      address: '127.0.0.1:0',
      db: { dir: join(dir, 'db') },
      storage: { disk: { dir: join(dir, 'data') } },
      metrics: { enable: true, interval_sec: 2, range_sec: 300 },
    }),
  );
  const server = await startServer(configFile);
  try {
    console.error(`server pid ${server.child.pid}, ${server.url}; ${cpus().length} CPUs`);
    const baseline = await measure(server, BASELINE_ROUNDS, BASELINE_ROUND_SEC);

    const createdAt = performance.now();
    for (let i = 0; i < PROCESSES; i++) {
      await request(server.url, 'POST', '/api/v3/process', JSON.stringify(processConfig(i)));
    }
    const createMs = performance.now() - createdAt;
    console.error(`created ${PROCESSES} processes in ${createMs.toFixed(0)} ms; warming up ${WARMUP_SEC} s`);
    await sleep(WARMUP_SEC * 1000);
    const machineBefore = machineTicks();
    const load = await measure(server, ROUNDS, SUPERVISE_SEC / ROUNDS);
    const machine = machineTicks();
    const coldList = await measureColdList(server.url);
    const machineBusy = ((machine.busy - machineBefore.busy) / (machine.total - machineBefore.total)) * 100;

    const states = JSON.parse(await request(server.url, 'GET', '/api/v3/process?filter=state')) as {
      state: { exec: string; progress: { fps: number } };
    }[];
    const running = states.filter((p) => p.state.exec === 'running');
    const fps = running.map((p) => p.state.progress.fps).sort((a, b) => a - b);

    const stopStarted = performance.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const stopMs = performance.now() - stopStarted;

    printTable(baseline, load, coldList);
    console.log('');
    console.log(
      `Processes: ${PROCESSES} created in ${createMs.toFixed(0)} ms; after ${SUPERVISE_SEC} s ${running.length} running, ` +
        `fps min/median/max ${fps[0]?.toFixed(2)}/${median(fps).toFixed(2)}/${fps.at(-1)?.toFixed(2)} (source ${SOURCE_FPS}); ` +
        `whole machine busy ${machineBusy.toFixed(0)} % during the load phase (${cpus().length} CPUs, encoders included); ` +
        `SIGTERM to exit ${stopMs.toFixed(0)} ms (exit code ${code}).`,
    );
  } finally {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

function processConfig(index: number): Record<string, unknown> {
  return {
    id: `bench-${String(index).padStart(3, '0')}`,
    input: [{ id: 'in', address: `testsrc=size=32x32:rate=${SOURCE_FPS}`, options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    options: ['-loglevel', 'info'],
    autostart: true,
  };
}

async function measure(
  server: { url: string; child: ChildProcess },
  rounds: number,
  roundSec: number,
): Promise<PhaseResult> {
  const result: PhaseResult = {
    cpuPercent: [],
    latencies: REQUESTS.map(() => []),
    decoding: REQUESTS.map(() => []),
  };
  const pid = server.child.pid as number;
  for (let round = 0; round < rounds; round++) {
    const startTicks = cpuTicksOfPid(pid);
    const start = performance.now();
    const spacing = (roundSec * 1000) / QUERIES_PER_ROUND;
    for (let query = 0; query < QUERIES_PER_ROUND; query++) {
      const due = start + query * spacing;
      await sleep(Math.max(0, due - performance.now()));
      for (const [index, spec] of REQUESTS.entries()) {
        const timed = await timedRequest(
          server.url,
          spec.method,
          spec.path,
          'body' in spec ? spec.body : undefined,
        );
        result.latencies[index]?.push(timed.latencyMs);
        result.decoding[index]?.push(timed.decodeMs);
      }
    }
    await sleep(Math.max(0, start + roundSec * 1000 - performance.now()));
    const seconds = (performance.now() - start) / 1000;
    result.cpuPercent.push(((cpuTicksOfPid(pid) - startTicks) / CLOCK_TICKS_PER_SEC / seconds) * 100);
    console.error(`round ${round + 1}/${rounds}: server CPU ${result.cpuPercent.at(-1)?.toFixed(1)} %`);
  }
  return result;
}

/** The list asked for only every COLD_LIST_SPACING_SEC: built on request each time. */
async function measureColdList(
  url: string,
): Promise<{ latencies: number[]; decoding: number[]; wireBytes: number; jsonBytes: number }> {
  const result = { latencies: [] as number[], decoding: [] as number[], wireBytes: 0, jsonBytes: 0 };
  for (let index = 0; index < COLD_LIST_REQUESTS; index++) {
    await sleep(COLD_LIST_SPACING_SEC * 1000);
    const timed = await timedRequest(url, 'GET', LIST_PATH);
    result.latencies.push(timed.latencyMs);
    result.decoding.push(timed.decodeMs);
    result.wireBytes = timed.wireBytes;
    result.jsonBytes = timed.jsonBytes;
  }
  return result;
}

function printTable(
  baseline: PhaseResult,
  load: PhaseResult,
  coldList: Awaited<ReturnType<typeof measureColdList>>,
): void {
  const ms = (value: number): string => `${value.toFixed(1)} ms`;
  console.log(
    `| measure | baseline (0 processes) | ${PROCESSES} processes | ratio | driver's decoding, median |`,
  );
  console.log('|---|---|---|---|---|');
  const cpuBase = median(baseline.cpuPercent);
  const cpuLoad = median(load.cpuPercent);
  console.log(
    `| server CPU, % of one core (median of rounds) | ${cpuBase.toFixed(1)} % | ${cpuLoad.toFixed(1)} % | ${(cpuLoad / Math.max(cpuBase, 0.1)).toFixed(1)}× | |`,
  );
  REQUESTS.forEach((spec, index) => {
    const base = baseline.latencies[index] ?? [];
    const loaded = load.latencies[index] ?? [];
    console.log(
      `| ${spec.label}: median / p95 | ${ms(median(base))} / ${ms(percentile(base, 95))} | ${ms(median(loaded))} / ${ms(percentile(loaded, 95))} | ${(median(loaded) / median(base)).toFixed(1)}× | ${ms(median(load.decoding[index] ?? []))} |`,
    );
  });
  console.log(
    `| ${LIST_PATH}, first in ${COLD_LIST_SPACING_SEC} s (built on request; ${COLD_LIST_REQUESTS} requests): median / max | | ${ms(median(coldList.latencies))} / ${ms(Math.max(...coldList.latencies))} | | ${ms(median(coldList.decoding))} |`,
  );
  console.log('');
  console.log(
    `The list of ${PROCESSES} processes: ${(coldList.jsonBytes / 1024).toFixed(1)} KB of JSON, ${(coldList.wireBytes / 1024).toFixed(1)} KB gzip-encoded.`,
  );
}

function startServer(
  configFile: string,
): Promise<{ url: string; child: ChildProcess; exited: Promise<number | null> }> {
  const root = join(import.meta.dirname, '..');
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match?.[1] !== undefined) resolve({ url: match[1], child, exited });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
}

async function request(base: string, method: string, path: string, body?: string): Promise<string> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * One request on the kept-alive connection: the time to the answer's last byte, then (clock
 * stopped) the driver's gunzip and decoding of it, and the status check.
 */
function timedRequest(
  base: string,
  method: string,
  path: string,
  body?: string,
): Promise<{ latencyMs: number; decodeMs: number; wireBytes: number; jsonBytes: number }> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { 'accept-encoding': 'gzip' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const sent = performance.now();
    const outgoing = httpRequest(url, { method, headers, agent: keepAlive }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const latencyMs = performance.now() - sent;
        const decodeStart = performance.now();
        const wire = Buffer.concat(chunks);
        const bytes = response.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire;
        const text = bytes.toString('utf8');
        const decodeMs = performance.now() - decodeStart;
        if (response.statusCode !== 200)
          reject(new Error(`${method} ${path}: ${response.statusCode} ${text}`));
        else resolve({ latencyMs, decodeMs, wireBytes: wire.length, jsonBytes: bytes.length });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Busy and total ticks of the whole machine (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

function median(values: number[]): number {
  return percentile(values, 50);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

await main();
