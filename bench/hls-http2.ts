/**
 * HLS over HTTPS: HTTP/1.1 against HTTP/2 (docs/tls.md#http2), to decide whether the HTTPS
 * listener should offer HTTP/2 (issue 26 item 1: "HTTP/2 if you measure that it serves HLS better").
 *
 * Method: the server runs in a child process (this file with the argument `serve`, so its CPU time
 * can be read from /proc/<pid>/stat), with two listeners on one self-signed P-256 certificate:
 * node's `https` server (HTTP/1.1, what streamcore's HTTPS listener does: TLS taken off, the
 * connection handed to the HTTP server) and `http2.createSecureServer` with `allowHTTP1` (what
 * offering HTTP/2 would be). Both answer the same two paths from memory with the same handler: a
 * media playlist (~250 bytes) and a segment of SEGMENT_KIB KiB (about 2 s of a 1 Mbit/s stream).
 * VIEWERS viewers in this process, each on a connection of its own (an HTTP/1.1 keep-alive socket,
 * or one HTTP/2 session), fetch the playlist then the segment, again and again, as fast as they
 * are answered: the cost of delivery at saturation. Rounds of DURATION_SEC after a 1 s warm-up,
 * alternating HTTP/1.1 and HTTP/2, ROUNDS each; medians, and the ratio HTTP/2 / HTTP/1.1 of the
 * same run. The load generator shares the machine with the server: only the ratios mean something.
 *
 * Run: node --import tsx bench/hls-http2.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectHttp2, createSecureServer, type ClientHttp2Session } from 'node:http2';
import { Agent, createServer as createHttpsServer, request } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { median, CLOCK_TICKS_PER_SEC, cpuTicksOfPid } from './measure.js';
import { selfSigned } from '../test/helpers/pebble.js';

const VIEWERS = Number(process.env.VIEWERS ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 5);
const SEGMENT_KIB = Number(process.env.SEGMENT_KIB ?? 256);

const PLAYLIST = Buffer.from(
  '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:41\n' +
    '#EXTINF:2.000000,\nseg-41.ts\n#EXTINF:2.000000,\nseg-42.ts\n#EXTINF:2.000000,\nseg-43.ts\n',
);
const SEGMENT = Buffer.alloc(SEGMENT_KIB * 1024, 0x47);

/** The one handler both servers run (the HTTP/2 compatibility API takes the same calls). */
function answer(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  const playlist = req.url === '/live.m3u8';
  const body = playlist ? PLAYLIST : SEGMENT;
  res.writeHead(200, {
    'content-type': playlist ? 'application/vnd.apple.mpegurl' : 'video/mp2t',
    'content-length': body.length,
  });
  res.end(body);
}

/** The child: both listeners on loopback; sends their ports to the parent. */
async function serve(): Promise<void> {
  const { cert, key } = JSON.parse(process.env.BENCH_CERT ?? '{}') as { cert: string; key: string };
  const tls = { cert, key, minVersion: 'TLSv1.2' as const };
  const h1 = createHttpsServer({ ...tls, ALPNProtocols: ['http/1.1'] }, answer);
  h1.keepAliveTimeout = 60_000;
  const h2 = createSecureServer({ ...tls, allowHTTP1: true }, answer);
  const listen = (server: typeof h1 | typeof h2): Promise<number> =>
    new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  process.send?.({ h1: await listen(h1), h2: await listen(h2) });
}

/** CPU seconds the process has used (user + system). */
function cpuSeconds(pid: number): number {
  return cpuTicksOfPid(pid) / CLOCK_TICKS_PER_SEC;
}

/** A viewer's connection: fetches one path, answers the body's byte count. */
interface Viewer {
  get(path: string): Promise<number>;
  close(): void;
}

function http1Viewer(port: number, ca: string): Viewer {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
  return {
    get: (path) =>
      new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, agent, servername: 'localhost' }, (res) => {
          let bytes = 0;
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => resolve(bytes));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      }),
    close: () => agent.destroy(),
  };
}

function http2Viewer(port: number, ca: string): Viewer {
  const session: ClientHttp2Session = connectHttp2(`https://localhost:${port}`, {
    ca,
    host: '127.0.0.1',
    lookup: (_host, _options, callback) => callback(null, '127.0.0.1', 4),
  });
  return {
    get: (path) =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ':path': path });
        let bytes = 0;
        stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
        stream.on('end', () => resolve(bytes));
        stream.on('error', reject);
        stream.end();
      }),
    close: () => session.close(),
  };
}

interface RoundResult {
  requestsPerSec: number;
  mibPerSec: number;
  serverCpuMsPerMib: number;
  segmentMedianMs: number;
}

async function round(server: ChildProcess, viewers: Viewer[], seconds: number): Promise<RoundResult> {
  const pid = server.pid ?? 0;
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const until = started + seconds * 1000;
  let requests = 0;
  let bytes = 0;
  const segmentMs: number[] = [];
  await Promise.all(
    viewers.map(async (viewer) => {
      while (performance.now() < until) {
        // Read before adding: `bytes += await …` would add to the value read before the wait.
        const playlistBytes = await viewer.get('/live.m3u8');
        const at = performance.now();
        const segmentBytes = await viewer.get('/seg-42.ts');
        segmentMs.push(performance.now() - at);
        bytes += playlistBytes + segmentBytes;
        requests += 2;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const mib = bytes / 1024 / 1024;
  return {
    requestsPerSec: requests / elapsed,
    mibPerSec: mib / elapsed,
    serverCpuMsPerMib: ((cpuSeconds(pid) - cpuBefore) * 1000) / mib,
    segmentMedianMs: median(segmentMs),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'streamcore-bench-http2-'));
  const files = selfSigned(dir, 'localhost', 'DNS:localhost,IP:127.0.0.1');
  const cert = readFileSync(files.cert, 'utf8');
  const key = readFileSync(files.key, 'utf8');
  const server = fork(import.meta.filename, ['serve'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CERT: JSON.stringify({ cert, key }) },
  });
  try {
    const ports = await new Promise<{ h1: number; h2: number }>((resolve) => server.once('message', resolve));
    const kinds = {
      'HTTP/1.1': () => http1Viewer(ports.h1, cert),
      'HTTP/2': () => http2Viewer(ports.h2, cert),
    };
    const results: Record<string, RoundResult[]> = { 'HTTP/1.1': [], 'HTTP/2': [] };
    for (let index = 0; index < ROUNDS; index += 1) {
      for (const [name, open] of Object.entries(kinds)) {
        const viewers = Array.from({ length: VIEWERS }, open);
        await round(server, viewers, 1);
        results[name]?.push(await round(server, viewers, DURATION_SEC));
        for (const viewer of viewers) viewer.close();
      }
    }
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, list]) => [
        name,
        {
          requestsPerSec: median(list.map((r) => r.requestsPerSec)),
          mibPerSec: median(list.map((r) => r.mibPerSec)),
          serverCpuMsPerMib: median(list.map((r) => r.serverCpuMsPerMib)),
          segmentMedianMs: median(list.map((r) => r.segmentMedianMs)),
        },
      ]),
    ) as Record<'HTTP/1.1' | 'HTTP/2', RoundResult>;
    const h1 = summary['HTTP/1.1'];
    const h2 = summary['HTTP/2'];
    const lines = [
      `${VIEWERS} viewers, ${SEGMENT_KIB} KiB segments, ${ROUNDS} rounds of ${DURATION_SEC} s each, medians`,
      '',
      '| protocol | requests/s | MiB/s | server CPU ms per MiB | segment time median (ms) |',
      '| --- | --- | --- | --- | --- |',
      ...Object.entries(summary).map(
        ([name, r]) =>
          `| ${name} | ${r.requestsPerSec.toFixed(0)} | ${r.mibPerSec.toFixed(1)} | ${r.serverCpuMsPerMib.toFixed(2)} | ${r.segmentMedianMs.toFixed(1)} |`,
      ),
      `| HTTP/2 / HTTP/1.1 | ${(h2.requestsPerSec / h1.requestsPerSec).toFixed(2)}× | ${(h2.mibPerSec / h1.mibPerSec).toFixed(2)}× | ${(h2.serverCpuMsPerMib / h1.serverCpuMsPerMib).toFixed(2)}× | ${(h2.segmentMedianMs / h1.segmentMedianMs).toFixed(2)}× |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') await serve();
else await main();
