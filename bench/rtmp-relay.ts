/**
 * One RTMP publisher and PLAYERS RTMP players on loopback (issues 13 and 31): what the relay costs
 * per player, its memory, and whether players keep up, against a bare socket copy and against the
 * reference server (datarhei Core v16.14.0, joy4's RTMP) in the same run.
 *
 * Method: a 640x360 30 fps clip with AAC is encoded once at a constant ~3 Mbit/s into FLV
 * (ffmpeg, before any measurement). The load generator (this process) sends its tags in real
 * time, looped with shifted timestamps, as chunks of 4096 bytes. The servers run as child
 * processes, so their CPU time (utime+stime from /proc/<pid>/stat) and RSS (1-second samples)
 * are theirs alone. Each round runs, one after the other:
 *   - baseline: bench/rtmp-copy-server.ts, which writes each byte the publisher sends to every
 *     player socket (no parsing, no bounds; players connect first and parse the chunk stream);
 *     BASELINE=0 leaves it out;
 *   - streamcore as users run it (`npm start`'s flags, dist/main.js: run `npm run build` first) with
 *     `rtmp.enable` (sessions counted, the ignore list emptied so all players are sessions);
 *   - the reference, when REFERENCE_CORE names its binary (built as docs/performance.md says), with
 *     CORE_RTMP_ENABLE and an ignore list nobody matches; skipped without it.
 * Players are raw-socket RTMP clients (test/helpers/rtmp-client.ts) that `play` live/bench a
 * second after the publisher went live, 25 at a time, spread over PLAYER_THREADS worker threads
 * (bench/rtmp-players-worker.ts) so that parsing their streams does not delay the publisher's
 * pacing in this thread; the load generator's CPU (all its threads) is printed beside each round. After WARMUP_SEC, DURATION_SEC are measured.
 * A player "fell behind" when its lag (the publisher's newest sent timestamp minus the player's
 * newest received one) grew by more than 1 s over its lag at the window's start at any 1-second
 * sample, when it had received nothing by then, or when its connection ended. BENCH_ROUNDS
 * rounds alternate the servers; the table has medians (behind and RSS max: the worst round).
 *
 * SERVER_NODE_FLAGS adds Node flags to streamcore (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 *
 * Run: npm run build && REFERENCE_CORE=/path/to/core node --import tsx bench/rtmp-relay.ts
 *      knobs: PLAYERS=100, DURATION_SEC=60, WARMUP_SEC=5, BENCH_ROUNDS=1, BASELINE=1, BITRATE=3M,
 *      PLAYER_THREADS=min(4, CPUs)
 *      (about 70 s per server and round, plus the clip's encoding)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { encodeChunks } from '../src/ingest/rtmp/chunk-writer.js';
import { RtmpTestClient } from '../test/helpers/rtmp-client.js';
import type { PlayersWorkerData } from './rtmp-players-worker.js';
import { spawnBuiltServer, freePort, CLOCK_TICKS_PER_SEC, cpuTicksIn, procStatFields } from './measure.js';
import { BEHIND_MS, RelayRounds, type RelayRound } from './relay-report.js';
import { REFERENCE_LABEL, referenceBinary, startReferenceCore, stopChild } from './reference-core.js';
import { firstMessages, tsWorker } from './ts-worker.js';

const PLAYERS = Number(process.env.PLAYERS ?? 100);
const WARMUP_SEC = Number(process.env.WARMUP_SEC ?? 5);
const DURATION_SEC = Number(process.env.DURATION_SEC ?? 60);
const BITRATE = process.env.BITRATE ?? '3M';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const PLAYER_THREADS = Number(process.env.PLAYER_THREADS ?? Math.min(4, availableParallelism()));
const BASELINE = process.env.BASELINE !== '0';
const CHUNK_SIZE = 4096;

interface Tag {
  typeId: number;
  timestamp: number;
  payload: Buffer;
}

interface Player {
  lastTimestamp(): number;
  bytes(): number;
  closed(): boolean;
}

async function encodeClip(file: string): Promise<void> {
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=640x360:rate=30:duration=10',
    '-f',
    'lavfi',
    '-i',
    'sine=duration=10',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-b:v',
    BITRATE,
    '-minrate',
    BITRATE,
    '-maxrate',
    BITRATE,
    '-bufsize',
    '1M',
    '-x264-params',
    'nal-hrd=cbr',
    '-g',
    '60',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-f',
    'flv',
    file,
  ];
  const child = spawn('ffmpeg', args, { stdio: 'inherit' });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`ffmpeg exited with ${String(code)}`);
}

/** FLV tags (FLV specification 10.1, annex E): audio, video and script data, in file order. */
function readFlv(bytes: Buffer): Tag[] {
  const tags: Tag[] = [];
  for (let offset = 13; offset + 11 <= bytes.length;) {
    const typeId = bytes[offset] as number;
    const size = bytes.readUIntBE(offset + 1, 3);
    const timestamp = bytes.readUIntBE(offset + 4, 3) + ((bytes[offset + 7] as number) << 24);
    const payload = bytes.subarray(offset + 11, offset + 11 + size);
    if (typeId === 8 || typeId === 9) tags.push({ typeId, timestamp, payload });
    offset += 11 + size + 4;
  }
  return tags;
}

async function procSample(pid: number): Promise<{ cpuTicks: number; rssBytes: number }> {
  const fields = procStatFields(await readFile(`/proc/${pid}/stat`, 'utf8'));
  return { cpuTicks: cpuTicksIn(fields), rssBytes: Number(fields[21]) * 4096 };
}

/** Sends the clip's tags in real time, looping, until stopped; `lastTimestamp` is the newest sent. */
function startPublisher(
  tags: Tag[],
  send: (tag: Tag) => void,
): { lastTimestamp: () => number; sent: () => number; stop: () => void } {
  const clipMs = (tags.at(-1)?.timestamp ?? 0) + 33;
  const started = performance.now();
  let index = 0;
  let loop = 0;
  let last = 0;
  let bytes = 0;
  let stopped = false;
  const pump = (): void => {
    if (stopped) return;
    const elapsed = performance.now() - started;
    for (;;) {
      const tag = tags[index] as Tag;
      const timestamp = tag.timestamp + loop * clipMs;
      if (timestamp > elapsed) break;
      send({ ...tag, timestamp });
      last = timestamp;
      bytes += tag.payload.length;
      index++;
      if (index === tags.length) {
        index = 0;
        loop++;
      }
    }
    setTimeout(pump, 5);
  };
  pump();
  return { lastTimestamp: () => last, sent: () => bytes, stop: () => (stopped = true) };
}

/**
 * PLAYERS players in PLAYER_THREADS worker threads (bench/rtmp-players-worker.ts), connected and
 * (for `rtmp`) playing when this resolves; `stop` closes them all.
 */
async function startPlayers(
  kind: PlayersWorkerData['kind'],
  port: number,
): Promise<{ players: Player[]; stop: () => Promise<void> }> {
  const threads = Math.max(1, Math.min(PLAYER_THREADS, PLAYERS));
  const workers: Worker[] = [];
  const players: Player[] = [];
  for (let thread = 0; thread < threads; thread++) {
    const count = Math.floor(PLAYERS / threads) + (thread < PLAYERS % threads ? 1 : 0);
    const state = new SharedArrayBuffer(count * 3 * Float64Array.BYTES_PER_ELEMENT);
    const slots = new Float64Array(state);
    slots.fill(-1);
    const data: PlayersWorkerData = { kind, port, count, state };
    workers.push(tsWorker(new URL('./rtmp-players-worker.ts', import.meta.url), data));
    for (let index = 0; index < count; index++) {
      players.push({
        lastTimestamp: () => slots[index * 3] as number,
        bytes: () => Math.max(0, slots[index * 3 + 1] as number),
        closed: () => slots[index * 3 + 2] === 1,
      });
    }
  }
  await firstMessages(workers);
  const stop = async (): Promise<void> => {
    await Promise.all(
      workers.map((worker) => {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage('stop');
        return exited;
      }),
    );
  };
  return { players, stop };
}

/**
 * Samples every second for DURATION_SEC after WARMUP_SEC. A player's lag is the publisher's newest
 * sent timestamp minus the player's newest received one; it is taken relative to the player's lag
 * at the window's start, because the reference restarts each player's timestamps at zero (and
 * starts it from its oldest cached keyframe) where streamcore keeps the publisher's.
 */
async function measure(
  name: string,
  pid: number,
  players: Player[],
  publisher: { lastTimestamp: () => number; sent: () => number },
): Promise<RelayRound> {
  await new Promise((resolve) => setTimeout(resolve, WARMUP_SEC * 1000));
  const behind = new Set<Player>();
  const lagAtStart = new Map<Player, number>();
  let worstLagGrowth = 0;
  for (const player of players) {
    if (player.lastTimestamp() < 0) behind.add(player);
    lagAtStart.set(player, publisher.lastTimestamp() - player.lastTimestamp());
  }
  const start = await procSample(pid);
  const generatorStart = process.cpuUsage();
  const sentStart = publisher.sent();
  const bytesStart = players.reduce((sum, player) => sum + player.bytes(), 0);
  const rss: number[] = [];
  for (let second = 0; second < DURATION_SEC; second++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    rss.push((await procSample(pid)).rssBytes);
    const newest = publisher.lastTimestamp();
    for (const player of players) {
      const growth = newest - player.lastTimestamp() - (lagAtStart.get(player) ?? 0);
      worstLagGrowth = Math.max(worstLagGrowth, growth);
      if (player.closed() || growth > BEHIND_MS) behind.add(player);
    }
  }
  const end = await procSample(pid);
  const generator = process.cpuUsage(generatorStart);
  const cpuPercent = ((end.cpuTicks - start.cpuTicks) / CLOCK_TICKS_PER_SEC / DURATION_SEC) * 100;
  rss.sort((a, b) => a - b);
  const egress = players.reduce((sum, player) => sum + player.bytes(), 0) - bytesStart;
  return {
    name,
    cpuPercent,
    cpuPerPlayer: cpuPercent / players.length,
    rssMedianMiB: (rss[Math.floor(rss.length / 2)] ?? 0) / 1048576,
    rssMaxMiB: (rss.at(-1) ?? 0) / 1048576,
    ingressMbit: ((publisher.sent() - sentStart) * 8) / DURATION_SEC / 1e6,
    egressMbit: (egress * 8) / DURATION_SEC / 1e6,
    behind: behind.size,
    worstLagGrowthMs: worstLagGrowth,
    generatorCpuPercent: (generator.user + generator.system) / 10_000 / DURATION_SEC,
    rssIdleMiB: Number.NaN,
  };
}

async function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (data: Buffer): void => {
      text += data.toString();
      const match = pattern.exec(text);
      if (match !== null) {
        child.stdout?.off('data', onData);
        resolve(match[1] ?? match[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${String(code)}: ${text}`)));
  });
}

async function baselineRound(tags: Tag[]): Promise<RelayRound> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'rtmp-copy-server.ts')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const port = Number(await waitForLine(child, /^(\d+)\n/));
    const idle = await procSample(child.pid as number);
    const { players, stop } = await startPlayers('raw', port);
    // Players are registered by their first byte; give the server a moment to read every one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise((resolve) => socket.once('connect', resolve));
    const size = Buffer.alloc(4);
    size.writeUInt32BE(CHUNK_SIZE);
    socket.write(
      Buffer.concat([
        Buffer.from('P'),
        encodeChunks({ typeId: 1, streamId: 0, timestamp: 0, payload: size }, 2, 128),
      ]),
    );
    const publisher = startPublisher(tags, (tag) =>
      socket.write(encodeChunks({ ...tag, streamId: 1 }, tag.typeId === 9 ? 6 : 4, CHUNK_SIZE)),
    );
    const result = {
      ...(await measure('baseline: bare socket copy', child.pid as number, players, publisher)),
      rssIdleMiB: idle.rssBytes / 1048576,
    };
    publisher.stop();
    socket.destroy();
    await stop();
    return result;
  } finally {
    child.kill();
  }
}

async function streamcoreRound(tags: Tag[], dir: string): Promise<RelayRound> {
  const rtmpPort = await freePort();
  const child = await spawnBuiltServer(dir, {
    rtmp: { enable: true, address: `127.0.0.1:${rtmpPort}` },
    sessions: { ip_ignorelist: [] },
  });
  try {
    await waitForStart(rtmpPort);
    return await relayRound('streamcore RTMP relay', child, rtmpPort, tags);
  } finally {
    await stopChild(child);
  }
}

async function referenceRound(binary: string, tags: Tag[], dir: string): Promise<RelayRound> {
  const rtmpPort = await freePort();
  const { child } = await startReferenceCore(binary, dir, {
    CORE_RTMP_ENABLE: 'true',
    CORE_RTMP_ADDRESS: `127.0.0.1:${rtmpPort}`,
    CORE_LOG_LEVEL: 'warn',
    // An ignore list nobody matches, so every player is a session, as in streamcore's round.
    CORE_SESSIONS_IP_IGNORELIST: '192.0.2.1/32',
  });
  try {
    await waitForStart(rtmpPort);
    return await relayRound(REFERENCE_LABEL, child, rtmpPort, tags);
  } finally {
    await stopChild(child);
  }
}

/** Publishes the clip to `live/bench`, lets PLAYERS play it, measures the server `child`. */
async function relayRound(
  name: string,
  child: ChildProcess,
  rtmpPort: number,
  tags: Tag[],
): Promise<RelayRound> {
  const idle = await procSample(child.pid as number);
  const client = await RtmpTestClient.open(rtmpPort);
  const status = await client.publish('live', 'bench');
  if (status !== 'NetStream.Publish.Start') throw new Error(`publish answered ${status}`);
  client.setChunkSize(CHUNK_SIZE);
  const publisher = startPublisher(tags, (tag) => client.sendMedia(tag.typeId, tag.timestamp, tag.payload));
  let stopPlayers = (): Promise<void> => Promise.resolve();
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { players, stop } = await startPlayers('rtmp', rtmpPort);
    stopPlayers = stop;
    return {
      ...(await measure(name, child.pid as number, players, publisher)),
      rssIdleMiB: idle.rssBytes / 1048576,
    };
  } finally {
    publisher.stop();
    client.close();
    await stopPlayers();
  }
}

async function waitForStart(port: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`nothing listens on ${port}`);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-rtmp-'));
  const reference = referenceBinary();
  try {
    const clip = join(dir, 'clip.flv');
    await encodeClip(clip);
    const tags = readFlv(await readFile(clip));
    const rounds = new RelayRounds();
    for (let round = 0; round < ROUNDS; round++) {
      if (BASELINE) rounds.record(await baselineRound(tags));
      rounds.record(await streamcoreRound(tags, await mkdtemp(join(dir, 'streamcore-'))));
      if (reference !== undefined)
        rounds.record(await referenceRound(reference, tags, await mkdtemp(join(dir, 'ref-'))));
    }
    await rounds.print(
      `${PLAYERS} players, ${ROUNDS} round(s) of ${DURATION_SEC} s after ${WARMUP_SEC} s warm-up (medians), ${BITRATE}bit/s video + 128k audio`,
      reference === undefined,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
