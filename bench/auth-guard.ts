/**
 * What the /api/v3 guard costs. Measures requests per second of the metrics catalog
 * (`GET /api/v3/metrics`) on three servers in this process:
 *   - bare:     node:http answering the same bytes (the floor of any HTTP server here),
 *   - open:     streamcore with auth disabled (no guard),
 *   - guarded:  streamcore with auth enabled, one valid access token (the guard's cached path).
 * Method: autocannon in a worker thread (so the load generator does not share the servers'
 * thread), 10 connections, one warm-up round per target, then ROUNDS rounds of DURATION_SEC each
 * with the targets interleaved; the table shows medians and the ratios to the bare server and to
 * the unguarded one, measured in the same run.
 *
 * Run: node --import tsx bench/auth-guard.ts
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';

/** The part of autocannon's API used here (the package ships no types). */
interface LoadResult {
  requests: { average: number };
  non2xx: number;
  errors: number;
}
type LoadGenerator = (options: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
  workers: number;
}) => Promise<LoadResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as LoadGenerator;

const ROUNDS = 5;
const DURATION_SEC = 4;
const CONNECTIONS = 10;

async function startApp(auth: boolean): Promise<{ app: App; url: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-'));
  const file = join(dir, 'config.json');
  await writeFile(
    file,
    JSON.stringify({
      address: '127.0.0.1:0',
      db: { dir: join(dir, 'db') },
      storage: { disk: { dir: join(dir, 'data') } },
      metrics: { enable: true },
      api: { auth: { enable: auth, username: 'admin', password: 'bench-password' } },
    }),
  );
  const { config } = await loadConfig({ CORE_CONFIGFILE: file }, dir);
  const app = await buildApp(config, { logger: pino({ level: 'silent' }) });
  return { app, url: await app.listen(), dir };
}

async function run(url: string, headers: Record<string, string>, seconds: number): Promise<number> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, workers: 1 });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function main(): Promise<void> {
  const open = await startApp(false);
  const guarded = await startApp(true);
  const login = await fetch(`${guarded.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'bench-password' }),
  });
  const { access_token } = (await login.json()) as { access_token: string };
  const catalog = Buffer.from(await (await fetch(`${open.url}/api/v3/metrics`)).arrayBuffer());
  const bare = createServer((_request, response) => {
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': catalog.length,
    });
    response.end(catalog);
  });
  bare.listen(0, '127.0.0.1');
  await once(bare, 'listening');
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/api/v3/metrics`;

  const targets: Array<{ name: string; url: string; headers: Record<string, string> }> = [
    { name: 'bare node:http', url: bareUrl, headers: {} },
    { name: 'streamcore, auth off', url: `${open.url}/api/v3/metrics`, headers: {} },
    {
      name: 'streamcore, guarded',
      url: `${guarded.url}/api/v3/metrics`,
      headers: { authorization: `Bearer ${access_token}` },
    },
  ];
  const samples = new Map<string, number[]>(targets.map((target) => [target.name, []]));
  try {
    for (const target of targets) await run(target.url, target.headers, 2);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const target of targets)
        samples.get(target.name)?.push(await run(target.url, target.headers, DURATION_SEC));
    }
  } finally {
    bare.close();
    for (const started of [open, guarded]) {
      await started.app.close();
      await rm(started.dir, { recursive: true, force: true });
    }
  }

  const medians = new Map([...samples].map(([name, values]) => [name, median(values)]));
  const bareRps = medians.get('bare node:http') ?? 1;
  const openRps = medians.get('streamcore, auth off') ?? 1;
  console.log(
    `GET /api/v3/metrics (catalog, ${catalog.length} bytes), ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_SEC} s, node ${process.version}\n`,
  );
  console.log('| server | median req/s | rounds (req/s) | vs bare | vs auth off |');
  console.log('|---|---:|---|---:|---:|');
  for (const target of targets) {
    const rps = medians.get(target.name) ?? 0;
    const rounds = (samples.get(target.name) ?? []).map((value) => Math.round(value)).join(', ');
    console.log(
      `| ${target.name} | ${Math.round(rps)} | ${rounds} | ${(rps / bareRps).toFixed(2)} | ${(rps / openRps).toFixed(2)} |`,
    );
  }
}

await main();
