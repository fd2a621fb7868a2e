/**
 * HTTPS against plain HTTP on the same server (docs/tls.md): HLS segment throughput, the metrics
 * API, and TLS handshakes per second.
 *
 * Method: the server runs as users run it, in a child process (`node --import tsx src/main.ts`),
 * with both listeners (`address` and `tls.address`, a self-signed P-256 certificate made with
 * openssl, TLS 1.3 as clients negotiate it); the load runs in this process over CONNECTIONS
 * keep-alive connections. Workloads: GET of a 1 MiB segment from memfs (MiB/s of bodies), `POST
 * /api/v3/metrics` with the whole catalog (requests/s), and new TLS connections, each a full
 * handshake without session resumption, closed at once (handshakes/s). Per workload: a 1 s warm-up,
 * then ROUNDS rounds of DURATION_SEC alternating plain and HTTPS; medians, and the ratio
 * HTTPS/plain of the same run. The load generator shares the machine with the server, so the
 * absolute figures are those of a loaded machine: only the ratios mean something.
 *
 * Run: node --import tsx bench/https.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { CATALOG } from '../src/monitor/store/catalog.js';
import { median } from './measure.js';
import { selfSigned } from '../test/helpers/pebble.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_SEC = Number(process.env.BENCH_DURATION ?? 4);
const CONNECTIONS = 8;
const SEGMENT_BYTES = 1024 * 1024;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Target {
  url: string;
  agent: HttpAgent;
  send: typeof httpRequest;
}

/** One request; answers the body's byte count. */
function fetchOnce(target: Target, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = target.send(
      `${target.url}${path}`,
      {
        method,
        agent: target.agent,
        headers:
          body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () =>
          response.statusCode === 200 ? resolve(bytes) : reject(new Error(`${path}: ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Runs `step` on CONNECTIONS loops for `seconds`; answers steps/s and units/s. */
async function load(
  seconds: number,
  step: () => Promise<number>,
): Promise<{ perSec: number; unitsPerSec: number }> {
  const until = performance.now() + seconds * 1000;
  let steps = 0;
  let units = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        units += await step();
        steps += 1;
      }
    }),
  );
  return { perSec: steps / seconds, unitsPerSec: units / seconds };
}

function handshake(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, session: undefined });
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve(1);
    });
    socket.once('error', reject);
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-https-'));
  let child: ChildProcess | undefined;
  try {
    const { cert, key } = selfSigned(dir, 'localhost', 'DNS:localhost,IP:127.0.0.1');
    const [plainPort, tlsPort] = [await freePort(), await freePort()];
    const configFile = join(dir, 'config.json');
    await writeFile(
      configFile,
      JSON.stringify({
        address: `127.0.0.1:${plainPort}`,
        db: { dir: join(dir, 'db') },
        storage: { disk: { dir: join(dir, 'data') }, memory: { auth: { enable: false } } },
        api: { auth: { enable: false } },
        tls: { enable: true, address: `127.0.0.1:${tlsPort}`, cert_file: cert, key_file: key },
      }),
    );
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, CORE_CONFIGFILE: configFile, CORE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const plain: Target = {
      url: `http://127.0.0.1:${plainPort}`,
      agent: new HttpAgent({ keepAlive: true }),
      send: httpRequest,
    };
    const https: Target = {
      url: `https://127.0.0.1:${tlsPort}`,
      agent: new HttpsAgent({ keepAlive: true, rejectUnauthorized: false }),
      send: httpsRequest,
    };
    for (let tries = 0; ; tries += 1) {
      const up = await fetchOnce(https, 'GET', '/ping').then(
        () => true,
        () => false,
      );
      if (up) break;
      if (tries > 300) throw new Error('the server did not start');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise<void>((resolve, reject) => {
      const request = httpRequest(`${plain.url}/memfs/segment.ts`, { method: 'PUT' }, (response) => {
        response.resume();
        response.on('end', resolve);
      });
      request.on('error', reject);
      request.end(Buffer.alloc(SEGMENT_BYTES, 7));
    });
    const metricsBody = JSON.stringify({ metrics: CATALOG.map(({ name }) => ({ name })) });
    const workloads: { label: string; unit: string; run: (target: Target) => Promise<number> }[] = [
      {
        label: 'GET 1 MiB HLS segment (memfs)',
        unit: 'MiB/s',
        run: async (target) =>
          (await load(DURATION_SEC, () => fetchOnce(target, 'GET', '/memfs/segment.ts'))).unitsPerSec /
          SEGMENT_BYTES,
      },
      {
        label: 'POST /api/v3/metrics (catalog)',
        unit: 'req/s',
        run: async (target) =>
          (await load(DURATION_SEC, () => fetchOnce(target, 'POST', '/api/v3/metrics', metricsBody))).perSec,
      },
    ];
    const rows: string[] = [];
    for (const workload of workloads) {
      await workload.run(plain).then(() => workload.run(https));
      const figures = { plain: [] as number[], https: [] as number[] };
      for (let round = 0; round < ROUNDS; round += 1) {
        figures.plain.push(await workload.run(plain));
        figures.https.push(await workload.run(https));
      }
      const [p, s] = [median(figures.plain), median(figures.https)];
      rows.push(
        `| ${workload.label} | ${p.toFixed(0)} ${workload.unit} | ${s.toFixed(0)} ${workload.unit} | ${(s / p).toFixed(2)} |`,
      );
    }
    const handshakes: number[] = [];
    await load(1, () => handshake(tlsPort));
    for (let round = 0; round < ROUNDS; round += 1)
      handshakes.push((await load(DURATION_SEC, () => handshake(tlsPort))).perSec);
    rows.push(
      `| TLS handshakes (new connection each, P-256, TLS 1.3) | | ${median(handshakes).toFixed(0)} /s | |`,
    );
    process.stdout.write(
      ['| workload | plain HTTP | HTTPS | HTTPS / plain |', '| --- | --- | --- | --- |', ...rows, ''].join(
        '\n',
      ),
    );
    plain.agent.destroy();
    https.agent.destroy();
  } finally {
    child?.kill('SIGTERM');
    await new Promise((resolve) =>
      child === undefined || child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve),
    );
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
