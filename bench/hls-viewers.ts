/**
 * VIEWERS simulated HLS viewers on one stream (docs/storage.md#the-contract,
 * docs/sessions.md#the-contract): what the server costs and whether anyone stalls, against the
 * same server without session accounting and against the reference (issue 31) in the same run.
 *
 * Method: the server runs as a child process so its CPU time and RSS can be read from
 * /proc/<pid>; one ffmpeg process, created over the API (`POST /api/v3/process`, the same body for
 * both servers), writes a 320x240 25 fps HLS stream (2-second segments, ~500 kbit/s) into memfs
 * with PUT. VIEWERS simulated players (test/session/hls-player.ts: master hand-off, playlist
 * reload every target/2, each new segment once, keep-alive, a simulated buffer that counts
 * stalls) join over JOIN_SEC from distinct loopback addresses (127.0.1.x, so every viewer is a
 * counted session) and watch for DURATION_SEC after a WARMUP_SEC warm-up. The viewers run in
 * VIEWER_THREADS worker threads (bench/hls-viewers-worker.ts); the load generator's CPU (all its
 * threads) is printed beside each round: near 100 % per thread, the viewers set the pace. Rounds, alternating:
 *   - baseline: streamcore with `sessions.enable=false` (no session accounting at all);
 *     BASELINE=0 leaves it out;
 *   - streamcore with sessions, the default: every viewer an `hls` session, every request an
 *     `http` session; metrics every 2 s;
 *   - the reference, when REFERENCE_CORE names its binary (docs/performance.md): its memfs (basic
 *     auth on, its default; ffmpeg gets the credentials through `{memfs}`) served by Go's HTTP
 *     server, sessions on, metrics every 2 s, an ignore list nobody matches; skipped without it.
 * streamcore runs as users run it (`npm start`'s flags, dist/main.js: run `npm run build` first;
 * SERVER_NODE_FLAGS adds Node flags, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 * Figures: server CPU (percent of one core, from utime+stime over the window) and per viewer, RSS
 * (before the stream starts, then median and max of 1-second samples), egress (viewer body bytes
 * over the window) and the server's own `session_txbitrate{collector="hls"}`, stalls and errors
 * summed over viewers. A viewer is "behind" when its simulated buffer ran dry (a stall) or a
 * request failed. BENCH_ROUNDS rounds; medians (stalls, errors, RSS max: the worst round).
 *
 * Run: npm run build && REFERENCE_CORE=/path/to/core node --import tsx bench/hls-viewers.ts
 *      knobs: VIEWERS=200, DURATION_SEC=60, BENCH_ROUNDS=1, BASELINE=1, VIEWER_THREADS=min(4, CPUs)
 *      (about 80 s per server and round)
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { PlayerReport } from '../test/session/hls-player.js';
import type { ViewersWorkerData } from './hls-viewers-worker.js';
import {
  spawnBuiltServer,
  freePort,
  median,
  CLOCK_TICKS_PER_SEC,
  cpuTicksIn,
  procStatFields,
} from './measure.js';
import { REFERENCE_LABEL, referenceBinary, startReferenceCore } from './reference-core.js';
import { firstMessages, tsWorker } from './ts-worker.js';

const VIEWERS = Number(process.env.VIEWERS ?? 200);
const JOIN_SEC = 5;
const WARMUP_SEC = 10;
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const BASELINE = process.env.BASELINE !== '0';
const VIEWER_THREADS = Number(process.env.VIEWER_THREADS ?? Math.min(4, availableParallelism()));

export interface RoundResult {
  name: string;
  cpuPercent: number;
  cpuPerViewer: number;
  /** Before the stream starts: the server's own floor. */
  rssIdleMiB: number;
  rssMedianMiB: number;
  rssMaxMiB: number;
  egressMbit: number;
  serverTxMbit: number | undefined;
  segments: number;
  stalls: number;
  stalledViewers: number;
  /** Viewers that stalled or had an error: "behind" in the comparison with the reference. */
  behindViewers: number;
  errors: number;
  /** This process's CPU over the window: near 100 % the viewers, not the server, set the pace. */
  generatorCpuPercent: number;
}

/** A server under test, started in `dir`: its process and its HTTP base URL. */
export type StartServer = (dir: string) => Promise<{ child: ChildProcess; url: string }>;

async function startStreamcore(
  dir: string,
  config: Record<string, unknown>,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const { storage, ...rest } = config;
  const child = await spawnBuiltServer(dir, {
    address: `127.0.0.1:${port}`,
    storage: { disk: { dir: join(dir, 'data') }, ...(storage as object | undefined) },
    metrics: { enable: true, interval_sec: 2 },
    sessions: { enable: true, ip_ignorelist: [], session_timeout_sec: 30 },
    ...rest,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (
      await fetch(`${url}/ping`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return { child, url };
    if (Date.now() > deadline) throw new Error('server did not start');
    await sleep(200);
  }
}

/** Where a round's stream is written (`address`), listed (`fs`) and played (`playlist`). */
export interface StreamPlace {
  address: string;
  fs: string;
  playlist: string;
}

const MEMFS: StreamPlace = { address: '{memfs}/{processid}.m3u8', fs: 'mem', playlist: '/memfs/bench.m3u8' };

async function startStream(url: string, place: StreamPlace): Promise<void> {
  const response = await fetch(`${url}/api/v3/process`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: 'bench',
      input: [{ address: 'testsrc2=size=320x240:rate=25', options: ['-re', '-f', 'lavfi'] }],
      output: [
        {
          address: place.address,
          options: [
            ...[
              '-codec:v',
              'libx264',
              '-preset',
              'ultrafast',
              '-g',
              '50',
              '-b:v',
              '500k',
              '-maxrate',
              '500k',
            ],
            ...['-bufsize', '1000k', '-f', 'hls', '-hls_time', '2', '-hls_list_size', '6'],
            ...['-hls_flags', 'delete_segments', '-method', 'PUT'],
          ],
        },
      ],
      options: ['-loglevel', 'error'],
    }),
  });
  if (response.status !== 200) throw new Error(`process: ${response.status} ${await response.text()}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const files = (await (await fetch(`${url}/api/v3/fs/${place.fs}`)).json()) as unknown[];
    if (files.length >= 5) return;
    if (Date.now() > deadline) throw new Error('stream did not start');
    await sleep(500);
  }
}

/** utime + stime of a process, seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  return cpuTicksIn(procStatFields(await readFile(`/proc/${pid}/stat`, 'utf8'))) / CLOCK_TICKS_PER_SEC;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function serverTxBitrate(url: string): Promise<number | undefined> {
  return serverTxBitrateOrThrow(url).catch(() => undefined);
}

async function serverTxBitrateOrThrow(url: string): Promise<number | undefined> {
  const response = await fetch(`${url}/api/v3/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metrics: [{ name: 'session_txbitrate', labels: { collector: '^hls$' } }] }),
  });
  const body = (await response.json()) as { metrics: { values: [number, number][] }[] };
  const values = body.metrics[0]?.values;
  return values?.[values.length - 1]?.[1];
}

/** Figures a round's caller measures itself over the same window (e.g. the S3 endpoint's). */
export interface WindowProbe {
  start(): void;
  stop(elapsedSec: number): void;
}

interface Viewers {
  /** Body bytes all viewers received so far. */
  received: () => number;
  /** Stops every viewer (once) and answers their reports. */
  stop: () => Promise<PlayerReport[]>;
}

/**
 * VIEWERS viewers of `url` spread over VIEWER_THREADS worker threads (bench/hls-viewers-worker.ts),
 * joining over JOIN_SEC in all.
 */
function startViewers(url: string): Viewers {
  const threads = Math.max(1, Math.min(VIEWER_THREADS, VIEWERS));
  const shares: { worker: Worker; received: Float64Array }[] = [];
  let first = 0;
  for (let thread = 0; thread < threads; thread++) {
    const count = Math.floor(VIEWERS / threads) + (thread < VIEWERS % threads ? 1 : 0);
    const received = new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT);
    const data: ViewersWorkerData = {
      url,
      first,
      count,
      joinGapMs: (JOIN_SEC * 1000 * threads) / VIEWERS,
      received,
    };
    shares.push({
      worker: tsWorker(new URL('./hls-viewers-worker.ts', import.meta.url), data),
      received: new Float64Array(received),
    });
    first += count;
  }
  let stopped: Promise<PlayerReport[]> | undefined;
  return {
    received: () => shares.reduce((sum, share) => sum + (share.received[0] as number), 0),
    stop: () => {
      if (stopped === undefined) {
        const workers = shares.map((share) => share.worker);
        const answers = firstMessages<PlayerReport[]>(workers);
        for (const worker of workers) worker.postMessage('stop');
        stopped = answers.then(async (reports) => {
          await Promise.all(workers.map((worker) => worker.terminate()));
          return reports.flat();
        });
      }
      return stopped;
    },
  };
}

export async function runRound(
  name: string,
  options: {
    config?: Record<string, unknown>;
    place?: StreamPlace;
    probe?: WindowProbe;
    /** Another server than streamcore with `config` (the reference). */
    start?: StartServer;
  } = {},
): Promise<RoundResult> {
  const place = options.place ?? MEMFS;
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-hls-bench-'));
  const { child, url } = await (options.start ?? ((at) => startStreamcore(at, options.config ?? {})))(dir);
  const sessions = (options.config?.sessions as { enable?: boolean } | undefined)?.enable !== false;
  const pid = child.pid as number;
  let viewers: Viewers | undefined;
  try {
    const idleRss = await rssMiB(pid);
    await startStream(url, place);
    viewers = startViewers(`${url}${place.playlist}`);
    await sleep(WARMUP_SEC * 1000);
    const bytesBefore = viewers.received();
    const cpuBefore = await cpuSeconds(pid);
    const generatorBefore = process.cpuUsage();
    options.probe?.start();
    const started = Date.now();
    const rss: number[] = [];
    while (Date.now() - started < DURATION_SEC * 1000) {
      rss.push(await rssMiB(pid));
      await sleep(1000);
    }
    const elapsedSec = (Date.now() - started) / 1000;
    options.probe?.stop(elapsedSec);
    const cpu = (await cpuSeconds(pid)) - cpuBefore;
    const generator = process.cpuUsage(generatorBefore);
    const serverTx = sessions ? await serverTxBitrate(url) : undefined;
    const bytesAfter = viewers.received();
    const reports = await viewers.stop();
    rss.sort((a, b) => a - b);
    return {
      name,
      cpuPercent: (cpu / elapsedSec) * 100,
      cpuPerViewer: ((cpu / elapsedSec) * 100) / VIEWERS,
      rssIdleMiB: idleRss,
      rssMedianMiB: rss[Math.floor(rss.length / 2)] ?? 0,
      rssMaxMiB: rss[rss.length - 1] ?? 0,
      egressMbit: ((bytesAfter - bytesBefore) * 8) / elapsedSec / 1_000_000,
      serverTxMbit: serverTx === undefined ? undefined : serverTx / 1_000_000,
      segments: reports.reduce((sum, r) => sum + r.segments, 0),
      stalls: reports.reduce((sum, r) => sum + r.stalls, 0),
      stalledViewers: reports.filter((r) => r.stalls > 0).length,
      behindViewers: reports.filter((r) => r.stalls > 0 || r.errors > 0).length,
      errors: reports.reduce((sum, r) => sum + r.errors, 0),
      generatorCpuPercent: (generator.user + generator.system) / 10_000 / elapsedSec,
    };
  } finally {
    await viewers?.stop();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dir, { recursive: true, force: true });
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function startReference(binary: string): StartServer {
  return (dir) =>
    startReferenceCore(binary, dir, {
      CORE_LOG_LEVEL: 'warn',
      // As streamcore's round: metrics every 2 s, every viewer a session.
      CORE_METRICS_ENABLE: 'true',
      CORE_METRICS_INTERVAL_SEC: '2',
      CORE_SESSIONS_IP_IGNORELIST: '192.0.2.1/32',
    });
}

async function main(): Promise<void> {
  const reference = referenceBinary();
  const rounds = new Map<string, RoundResult[]>();
  const record = (result: RoundResult): void => {
    rounds.set(result.name, [...(rounds.get(result.name) ?? []), result]);
    process.stderr.write(
      `  ${result.name}: ${result.cpuPercent.toFixed(1)} % CPU, ${result.rssMedianMiB.toFixed(0)} MiB, ${result.behindViewers} behind\n`,
    );
  };
  for (let round = 0; round < ROUNDS; round++) {
    if (BASELINE) {
      record(await runRound('baseline (sessions.enable=false)', { config: { sessions: { enable: false } } }));
    }
    record(await runRound('streamcore, sessions (default)'));
    if (reference !== undefined)
      record(await runRound(REFERENCE_LABEL, { start: startReference(reference) }));
  }
  const load = (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
  const base = median(rounds.get('streamcore, sessions (default)')!.map((r) => r.cpuPercent));
  const lines = [
    `${VIEWERS} viewers, ${ROUNDS} round(s) of ${DURATION_SEC} s measured after ${WARMUP_SEC} s warm-up (medians), one ~500 kbit/s stream; load average at the end ${load}`,
    ...(reference === undefined ? ['(no REFERENCE_CORE: the reference round was skipped)'] : []),
    '',
    '| round | server CPU (% of a core) | CPU per viewer (% of a core) | RSS idle → median / max (MiB) | egress (Mbit/s) | server session_txbitrate hls (Mbit/s) | segments | stalls (viewers) | errors | viewers behind | CPU vs streamcore | load generator CPU (%) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, results] of rounds) {
    const m = (pick: (r: RoundResult) => number): number => median(results.map(pick));
    const tx = results.map((r) => r.serverTxMbit).filter((value) => value !== undefined);
    const worst = (pick: (r: RoundResult) => number): number => Math.max(...results.map(pick));
    lines.push(
      `| ${name} | ${m((r) => r.cpuPercent).toFixed(1)} | ${m((r) => r.cpuPerViewer).toFixed(4)} | ${m((r) => r.rssIdleMiB).toFixed(0)} → ${m((r) => r.rssMedianMiB).toFixed(0)} / ${worst((r) => r.rssMaxMiB).toFixed(0)} | ${m((r) => r.egressMbit).toFixed(1)} | ${tx.length === 0 ? '–' : median(tx).toFixed(1)} | ${m((r) => r.segments)} | ${worst((r) => r.stalls)} (${worst((r) => r.stalledViewers)}) | ${worst((r) => r.errors)} | ${worst((r) => r.behindViewers)} | ${(m((r) => r.cpuPercent) / base).toFixed(2)}× | ${m((r) => r.generatorCpuPercent).toFixed(0)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

// Run when executed, not when bench/s3-viewers.ts borrows its rounds.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
