/**
 * Fallback sources (docs/processes.md#fallback-sources): how fast an input switches to its
 * fallback and back, and what a waiting fallback costs.
 *
 * Method: one server in this process (RTMP on), publishers are ffmpeg (320x240, 25 fps, a
 * keyframe every second, AAC) into `{rtmp,name=…}`.
 * - Switch times: one process restreams `{rtmp,name=bench-cam}` to `{rtmp,name=bench-out}`
 *   (`-c copy`) with a still-image fallback (timeout 1 s, return after 2 s, no switch-back bound).
 *   BENCH_CYCLES times: the publisher is lost — every other cycle it *ends* (SIGKILL: the RTMP
 *   connection closes) or *stalls* (SIGSTOP: the connection stays, no more data) — and the time
 *   until the state's `input_live` says `fallback` is taken (polled every 50 ms); after 2 s a new
 *   publisher starts, and the time from its stream being listed by `GET /api/v3/rtmp` until
 *   `input_live` says `primary` is taken, as is the switch's own figure from the process log (how
 *   long the primary had been stable at the switch-back, minus return_after_seconds: the wait
 *   for its keyframe). A viewer on `bench-out` (ffmpeg) times the frames as they arrive: the
 *   longest wait for a frame around each switch is what a viewer of the platform sees.
 * - Cost: BENCH_PROCESSES processes copy one published stream to `-f null`, first without a
 *   fallback, then with one (waiting: the primary is live). After a warm-up, the CPU time of this
 *   process (the server) and of all its descendants (encoders, feeders, sandboxes) is read from
 *   /proc over BENCH_COST_SECONDS, and the proportional memory (PSS) of the descendants and of the server at the end.
 *
 * Past 300 lines: the two measurements share the server, its publishers and the /proc readers.
 *
 * Run: node --import tsx bench/fallback.ts   (BENCH_CYCLES=20 BENCH_PROCESSES=20 BENCH_COST_SECONDS=15)
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../test/helpers/server.js';
import { publish, type Ffmpeg } from '../test/ingest/rtmp-support.js';
import { FlvTagReader, TAG_VIDEO } from '../src/process/fallback/flv.js';
import { CLOCK_TICKS_PER_SEC, cpuTicksIn, procStatFields } from './measure.js';

const CYCLES = Number(process.env.BENCH_CYCLES ?? 20);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 20);
const COST_SECONDS = Number(process.env.BENCH_COST_SECONDS ?? 15);
const WARMUP_MS = 8000;
const RETURN_AFTER_S = 2;

const server = await startServer({
  config: { rtmp: { enable: true, address: '127.0.0.1:0', app: '/live', token: '' } },
  checkAnswers: false,
});
const port = server.app.ingest.rtmp?.ports()[0] ?? 0;
execFileSync('ffmpeg', [
  ...['-v', 'error', '-f', 'lavfi', '-i', 'color=red:size=320x240', '-frames:v', '1'],
  join(server.config.storage.disk.dir, 'fallback.png'),
]);
const publishers = new Set<Ffmpeg>();

try {
  const switches = await switchTimes();
  const cost = await waitingCost();
  console.log(
    `\nFallback switch times, ${CYCLES} cycles (machine busy: other engineers' tests ran alongside)`,
  );
  console.log('| what | median | worst |');
  console.log('| --- | ---: | ---: |');
  for (const [what, values] of Object.entries(switches)) {
    console.log(`| ${what} | ${median(values).toFixed(0)} ms | ${Math.max(...values).toFixed(0)} ms |`);
  }
  console.log(`\nCost of ${PROCESSES} processes copying one RTMP stream to -f null, over ${COST_SECONDS} s`);
  console.log('| | server CPU | encoders + feeders CPU | total CPU | processes | their PSS | server PSS |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [label, row] of Object.entries(cost)) {
    console.log(
      `| ${label} | ${row.serverCpu.toFixed(1)} % | ${row.childCpu.toFixed(1)} % | ${(row.serverCpu + row.childCpu).toFixed(1)} % | ${row.children} | ${mib(row.childRss)} MiB | ${mib(row.serverRss)} MiB |`,
    );
  }
  const without = cost['without fallback'];
  const withFallback = cost['with fallback waiting'];
  if (without !== undefined && withFallback !== undefined) {
    const cpu =
      (withFallback.serverCpu + withFallback.childCpu - without.serverCpu - without.childCpu) / PROCESSES;
    const rss =
      (withFallback.childRss + withFallback.serverRss - without.childRss - without.serverRss) / PROCESSES;
    console.log(`\nPer waiting fallback: ${cpu.toFixed(2)} % of one core, ${mib(rss)} MiB`);
  }
} finally {
  for (const publisher of publishers) publisher.child.kill('SIGKILL');
  await server.close();
}

async function switchTimes(): Promise<Record<string, number[]>> {
  let publisher = await startPublisher('bench-cam');
  await api(
    'POST',
    '/process',
    processBody('switch', 'bench-cam', ['-c', 'copy', '-f', 'flv'], '{rtmp,name=bench-out}'),
  );
  await untilLive('switch', 'primary', 20_000);
  await untilPublished('bench-out');
  const platform = watchPlatform('bench-out');
  await sleep(3000);
  const times: Record<string, number[]> = {
    'switch-over, primary ended': [],
    'switch-over, primary stalled (timeout 1 s)': [],
    'switch-back, from the primary being published again': [],
    'switch-back, after return_after_seconds of stable primary (keyframe wait)': [],
    'platform side: longest wait for a frame around a switch-over': [],
    'platform side: longest wait for a frame around a switch-back': [],
  };
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const ends = cycle % 2 === 0;
    platform.restart();
    publisher.child.kill(ends ? 'SIGKILL' : 'SIGSTOP');
    const lostAt = performance.now();
    await untilLive('switch', 'fallback', 15_000);
    times[ends ? 'switch-over, primary ended' : 'switch-over, primary stalled (timeout 1 s)']?.push(
      performance.now() - lostAt,
    );
    await sleep(2000);
    times['platform side: longest wait for a frame around a switch-over']?.push(platform.restart());
    publisher.child.kill('SIGKILL');
    publishers.delete(publisher);
    await untilUnpublished('bench-cam');
    publisher = await startPublisher('bench-cam');
    const backAt = performance.now();
    await untilLive('switch', 'primary', 30_000);
    times['switch-back, from the primary being published again']?.push(performance.now() - backAt);
    await sleep(1000);
    times['platform side: longest wait for a frame around a switch-back']?.push(platform.restart());
    times['switch-back, after return_after_seconds of stable primary (keyframe wait)']?.push(
      ((await lastStableSeconds('switch')) - RETURN_AFTER_S) * 1000,
    );
    process.stdout.write(`cycle ${cycle + 1}/${CYCLES}\r`);
  }
  platform.stop();
  await api('DELETE', '/process/switch');
  publisher.child.kill('SIGKILL');
  publishers.delete(publisher);
  return times;
}

/** How long the primary had been stable at the last switch-back, by the process's log. */
async function lastStableSeconds(id: string): Promise<number> {
  const report = (await api('GET', `/process/${id}/report`)) as { log: [string, string][] };
  const lines = report.log.map(([, line]) => /primary live \(primary stable for ([\d.]+) s\)/.exec(line));
  return Number(lines.filter((match) => match !== null).at(-1)?.[1]);
}

interface CostRow {
  serverCpu: number;
  childCpu: number;
  children: number;
  childRss: number;
  serverRss: number;
}

async function waitingCost(): Promise<Record<string, CostRow>> {
  const publisher = await startPublisher('cost-cam');
  const rows: Record<string, CostRow> = {};
  for (const [label, withFallback] of [
    ['without fallback', false],
    ['with fallback waiting', true],
  ] as const) {
    const ids = Array.from({ length: PROCESSES }, (_, index) => `cost-${withFallback ? 'f' : 'n'}-${index}`);
    for (const id of ids) {
      const body = processBody(id, 'cost-cam', ['-c', 'copy', '-f', 'null'], '-');
      if (!withFallback) delete (body.input[0] as { fallback?: unknown }).fallback;
      await api('POST', '/process', body);
    }
    await sleep(WARMUP_MS);
    const before = cpuTicks();
    const started = performance.now();
    await sleep(COST_SECONDS * 1000);
    const after = cpuTicks();
    const seconds = (performance.now() - started) / 1000;
    const percent = (ticks: number): number => (ticks / CLOCK_TICKS_PER_SEC / seconds) * 100;
    let childTicks = 0;
    for (const [pid, ticks] of after.children) childTicks += ticks - (before.children.get(pid) ?? 0);
    rows[label] = {
      serverCpu: percent(after.self - before.self),
      childCpu: percent(childTicks),
      children: after.children.size,
      childRss: [...after.children.keys()].reduce((sum, pid) => sum + rssOf(pid), 0),
      serverRss: rssOf(process.pid),
    };
    for (const id of ids) await api('DELETE', `/process/${id}`);
  }
  publisher.child.kill('SIGKILL');
  publishers.delete(publisher);
  return rows;
}

/** CPU ticks of this process and of each of its descendants, except the publishers. */
function cpuTicks(): { self: number; children: Map<number, number> } {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const fields = procStatFields(readFileSync(`/proc/${name}/stat`, 'utf8'));
      parents.set(Number(name), Number(fields[1]));
      ticks.set(Number(name), cpuTicksIn(fields));
    } catch {
      // Gone meanwhile.
    }
  }
  const excluded = new Set([...publishers].map((publisher) => publisher.child.pid));
  const children = new Map<number, number>();
  for (const [pid, value] of ticks) {
    if (excluded.has(pid)) continue;
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (excluded.has(parent)) break;
      if (parent === process.pid) {
        children.set(pid, value);
        break;
      }
    }
  }
  return { self: ticks.get(process.pid) ?? 0, children };
}

/** Proportional set size: shared pages (ffmpeg's libraries) split among the processes that map them. */
function rssOf(pid: number): number {
  try {
    const kib = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return Number(kib ?? 0) * 1024;
  } catch {
    return 0;
  }
}

function processBody(id: string, name: string, options: string[], output: string) {
  return {
    id,
    input: [
      {
        id: 'in',
        address: `{rtmp,name=${name}}`,
        options: [] as string[],
        fallback: {
          address: '{diskfs}/fallback.png',
          timeout_seconds: 1,
          return_after_seconds: RETURN_AFTER_S,
          switch_back_interval_seconds: 0,
        },
      },
    ],
    output: [{ id: 'out', address: output, options }],
    autostart: true,
  };
}

async function startPublisher(name: string): Promise<Ffmpeg> {
  const publisher = publish(`rtmp://127.0.0.1:${port}/live/${name}`, 3600);
  publishers.add(publisher);
  await untilPublished(name);
  return publisher;
}

/**
 * A viewer of `{rtmp,name=<name>}` (ffmpeg copying it to FLV on a pipe): `restart()` answers the
 * longest time between two video frames arriving since the last call (what a viewer waits).
 */
function watchPlatform(name: string): { restart: () => number; stop: () => void } {
  const viewer = spawn(
    'ffmpeg',
    // Every packet written at once: the fallback's frames are small and would otherwise wait in
    // ffmpeg's output buffer.
    [
      ...['-v', 'error', '-fflags', 'nobuffer', '-i', `rtmp://127.0.0.1:${port}/live/${name}`],
      ...['-c', 'copy', '-flush_packets', '1', '-f', 'flv', 'pipe:1'],
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let last = performance.now();
  let longest = 0;
  const reader = new FlvTagReader((tag) => {
    if (tag.type !== TAG_VIDEO) return;
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  });
  viewer.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
  return {
    restart: () => {
      if (viewer.exitCode !== null) throw new Error('the platform viewer was disconnected');
      const answer = Math.max(longest, performance.now() - last);
      longest = 0;
      return answer;
    },
    stop: () => viewer.kill('SIGKILL'),
  };
}

async function untilPublished(name: string): Promise<void> {
  await until(async () => (await published()).includes(`/live/${name}`), `${name} published`, 20_000);
}

async function untilUnpublished(name: string): Promise<void> {
  await until(async () => !(await published()).includes(`/live/${name}`), `${name} gone`, 20_000);
}

async function published(): Promise<string[]> {
  return ((await api('GET', '/rtmp')) as { name: string }[]).map((stream) => stream.name);
}

async function untilLive(id: string, live: string, timeoutMs: number): Promise<void> {
  await until(
    async () =>
      ((await api('GET', `/process/${id}/state`)) as { input_live?: Record<string, string> }).input_live
        ?.in === live,
    `${id} on ${live}`,
    timeoutMs,
  );
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${server.url}/api/v3${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
