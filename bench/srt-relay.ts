/**
 * SRT relay beside the reference (issue 31): PUBLISHERS ffmpeg publishers and PLAYERS ffmpeg
 * players (spread evenly over the streams) on loopback, what the server costs per player, its
 * memory, and whether players keep up.
 *
 * Method: a 640x360 30 fps H.264 + AAC clip is encoded once at a constant BITRATE into MPEG-TS.
 * Each publisher sends it in real time, looped (`ffmpeg -re -stream_loop -1 … -c copy`), to
 * `streamid=benchN,mode:publish`; each player reads `streamid=benchN` and copies it to its stdout,
 * which this process counts (egress). Both sides use latency 120 ms and report their progress
 * (`-progress`, every 0.25 s). Rounds, one server at a time, each a child process whose CPU time
 * (utime+stime) and RSS (1-second samples) are read from /proc:
 *   - streamcore as users run it (`npm start`'s flags, dist/main.js: run `npm run build` first)
 *     with `srt.enable` (libsrt through native/srt; sessions counted, the ignore list emptied);
 *   - the reference, when REFERENCE_CORE names its binary, with CORE_SRT_ENABLE (gosrt), an
 *     ignore list nobody matches; skipped without it.
 * After WARMUP_SEC, DURATION_SEC are measured. A player "fell behind" when the media time it has
 * written (its `out_time`) lagged its publisher's by more than 1 s more than at the window's start
 * at any 1-second sample, when it had written nothing by then, or when it exited. BENCH_ROUNDS
 * rounds alternate the servers; medians (behind and RSS max: the worst round).
 *
 * SERVER_NODE_FLAGS adds Node flags to streamcore (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 *
 * Run: npm run build && REFERENCE_CORE=/path/to/core node --import tsx bench/srt-relay.ts
 *      knobs: PUBLISHERS=10, PLAYERS=50, DURATION_SEC=60, WARMUP_SEC=10, BENCH_ROUNDS=1,
 *      BITRATE=1M (about 80 s per server and round; 60 ffmpeg processes share the machine)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnBuiltServer, CLOCK_TICKS_PER_SEC, cpuTicks, freePort } from './measure.js';
import { BEHIND_MS, RelayRounds, type RelayRound } from './relay-report.js';
import { REFERENCE_LABEL, referenceBinary, startReferenceCore, stopChild } from './reference-core.js';

const PUBLISHERS = Number(process.env.PUBLISHERS ?? 10);
const PLAYERS = Number(process.env.PLAYERS ?? 50);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 10);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const BITRATE = process.env.BITRATE ?? '1M';

/** An ffmpeg whose `-progress` this process reads: media time written so far, and bytes. */
interface Side {
  child: ChildProcess;
  outTimeMs: () => number;
  bytes: () => number;
  exited: () => boolean;
}

function run(args: string[]): Promise<void> {
  const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`)))),
  );
}

async function encodeClip(file: string): Promise<void> {
  await run([
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30:duration=10'],
    ...['-f', 'lavfi', '-i', 'sine=duration=10'],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-b:v', BITRATE, '-minrate', BITRATE],
    ...['-maxrate', BITRATE, '-bufsize', '500k', '-x264-params', 'nal-hrd=cbr', '-g', '60'],
    ...['-c:a', 'aac', '-b:a', '128k', '-f', 'mpegts', file],
  ]);
}

function srtUrl(port: number, streamId: string): string {
  return `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=120000&streamid=${streamId}`;
}

/**
 * Starts ffmpeg with `-progress` on `progressFd` (1 or 2) and follows its `out_time_us`;
 * `countStdout` counts what it writes to stdout as the side's bytes (else `total_size` is).
 */
function follow(args: string[], progressFd: 1 | 2, countStdout: boolean): Side {
  const child = spawn(
    'ffmpeg',
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostats',
      '-stats_period',
      '0.25',
      '-progress',
      `pipe:${progressFd}`,
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let outTimeMs = -1;
  let bytes = 0;
  let text = '';
  const progress = progressFd === 1 ? child.stdout : child.stderr;
  progress.on('data', (data: Buffer) => {
    text += data.toString('latin1');
    const lines = text.split('\n');
    text = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('out_time_us=')) {
        const value = Number(line.slice('out_time_us='.length));
        if (Number.isFinite(value)) outTimeMs = value / 1000;
      } else if (!countStdout && line.startsWith('total_size=')) {
        const value = Number(line.slice('total_size='.length));
        if (Number.isFinite(value)) bytes = value;
      }
    }
  });
  if (countStdout) child.stdout.on('data', (data: Buffer) => (bytes += data.length));
  else if (progressFd === 1) child.stderr.resume();
  return {
    child,
    outTimeMs: () => outTimeMs,
    bytes: () => bytes,
    exited: () => child.exitCode !== null || child.signalCode !== null,
  };
}

function publish(clip: string, port: number, stream: string): Side {
  return follow(
    [
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      clip,
      '-c',
      'copy',
      '-f',
      'mpegts',
      srtUrl(port, `${stream},mode:publish`),
    ],
    1,
    false,
  );
}

function play(port: number, stream: string): Side {
  // Probing stops after one GOP (2 s) instead of ffmpeg's 5 s, so playing starts sooner.
  return follow(
    [
      '-analyzeduration',
      '2000000',
      '-i',
      srtUrl(port, stream),
      '-map',
      '0',
      '-c',
      'copy',
      '-f',
      'mpegts',
      'pipe:1',
    ],
    2,
    true,
  );
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForUdpListener(port: number): Promise<void> {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const table = await readFile('/proc/net/udp', 'utf8');
    if (table.includes(`:${hex} 00000000:0000`)) return;
    await sleep(200);
  }
  throw new Error(`nothing listens on UDP ${port}`);
}

/** Publishers first, players a second later; measures `server` over the window. */
async function relayRound(
  name: string,
  server: ChildProcess,
  port: number,
  clip: string,
): Promise<RelayRound> {
  await waitForUdpListener(port);
  const idleRss = await rssBytes(server.pid as number);
  const publishers = Array.from({ length: PUBLISHERS }, (_, i) => publish(clip, port, `bench${i}`));
  const players: { side: Side; publisher: Side }[] = [];
  try {
    await sleep(2000);
    for (let i = 0; i < PLAYERS; i++) {
      players.push({ side: play(port, `bench${i % PUBLISHERS}`), publisher: publishers[i % PUBLISHERS]! });
    }
    await sleep(WARMUP_SEC * 1000);
    const lag = ({ side, publisher }: { side: Side; publisher: Side }): number =>
      publisher.outTimeMs() - side.outTimeMs();
    const behind = new Set<Side>();
    const lagAtStart = new Map<Side, number>();
    for (const player of players) {
      if (player.side.outTimeMs() < 0) behind.add(player.side);
      lagAtStart.set(player.side, lag(player));
    }
    let worstLagGrowth = 0;
    const cpuStart = cpuTicks(server);
    const generatorStart = process.cpuUsage();
    const ingressStart = publishers.reduce((sum, side) => sum + side.bytes(), 0);
    const egressStart = players.reduce((sum, { side }) => sum + side.bytes(), 0);
    const started = Date.now();
    const rss: number[] = [];
    for (let second = 0; second < DURATION_SEC; second++) {
      await sleep(1000);
      rss.push(await rssBytes(server.pid as number));
      for (const player of players) {
        const growth = lag(player) - (lagAtStart.get(player.side) ?? 0);
        worstLagGrowth = Math.max(worstLagGrowth, growth);
        if (player.side.exited() || growth > BEHIND_MS) behind.add(player.side);
      }
    }
    const elapsedSec = (Date.now() - started) / 1000;
    const generator = process.cpuUsage(generatorStart);
    const cpuPercent = ((cpuTicks(server) - cpuStart) / CLOCK_TICKS_PER_SEC / elapsedSec) * 100;
    const ingress = publishers.reduce((sum, side) => sum + side.bytes(), 0) - ingressStart;
    const egress = players.reduce((sum, { side }) => sum + side.bytes(), 0) - egressStart;
    rss.sort((a, b) => a - b);
    return {
      name,
      cpuPercent,
      cpuPerPlayer: cpuPercent / PLAYERS,
      rssIdleMiB: idleRss / 1048576,
      rssMedianMiB: (rss[Math.floor(rss.length / 2)] ?? 0) / 1048576,
      rssMaxMiB: (rss.at(-1) ?? 0) / 1048576,
      ingressMbit: (ingress * 8) / elapsedSec / 1e6,
      egressMbit: (egress * 8) / elapsedSec / 1e6,
      behind: behind.size,
      worstLagGrowthMs: worstLagGrowth,
      // The ffmpeg processes are the load here; this counts only their readers.
      generatorCpuPercent: (generator.user + generator.system) / 10_000 / elapsedSec,
    };
  } finally {
    for (const side of [...players.map((player) => player.side), ...publishers]) side.child.kill('SIGKILL');
  }
}

async function streamcoreRound(clip: string, dir: string): Promise<RelayRound> {
  const port = await freePort();
  const child = await spawnBuiltServer(dir, {
    srt: { enable: true, address: `127.0.0.1:${port}` },
    sessions: { ip_ignorelist: [] },
  });
  try {
    return await relayRound('streamcore SRT (libsrt)', child, port, clip);
  } finally {
    await stopChild(child);
  }
}

async function referenceRound(binary: string, clip: string, dir: string): Promise<RelayRound> {
  const port = await freePort();
  const { child } = await startReferenceCore(binary, dir, {
    CORE_SRT_ENABLE: 'true',
    CORE_SRT_ADDRESS: `127.0.0.1:${port}`,
    CORE_LOG_LEVEL: 'warn',
    CORE_SESSIONS_IP_IGNORELIST: '192.0.2.1/32',
  });
  try {
    return await relayRound(`${REFERENCE_LABEL}, gosrt`, child, port, clip);
  } finally {
    await stopChild(child);
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-srt-'));
  const reference = referenceBinary();
  try {
    const clip = join(dir, 'clip.ts');
    await encodeClip(clip);
    const rounds = new RelayRounds();
    for (let round = 0; round < ROUNDS; round++) {
      rounds.record(await streamcoreRound(clip, await mkdtemp(join(dir, 'streamcore-'))));
      if (reference !== undefined)
        rounds.record(await referenceRound(reference, clip, await mkdtemp(join(dir, 'ref-'))));
    }
    await rounds.print(
      `${PUBLISHERS} publishers, ${PLAYERS} players, ${ROUNDS} round(s) of ${DURATION_SEC} s after ${WARMUP_SEC} s warm-up (medians), ${BITRATE}bit/s video + 128k audio each`,
      reference === undefined,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
