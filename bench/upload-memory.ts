/**
 * Memory during a large upload (issue 24 item 7): the server's RSS idle and at its peak while a
 * 1 GiB body is PUT to `/api/v3/fs/disk/…`. Target: the peak within 32 MiB of idle.
 *
 * Method: the server runs from source (`src/main.ts` through tsx, so no build is needed) with the
 * Node flags of `npm start`, auth on. A 4 MiB upload warms the path first. Each round reads the
 * idle RSS (median of 5 readings 100 ms apart), then PUTs 1 GiB generated on the fly (one reused
 * 1 MiB chunk) while /proc/<pid>/status is read every 20 ms; the file is deleted after the round.
 * Three rounds; the table shows each and the medians.
 *
 * Run: node --import tsx bench/upload-memory.ts   (BENCH_UPLOAD_MIB=1024, BENCH_ROUNDS=3)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './measure.js';
import { readStartScript } from '../scripts/start-script.js';
import { startMain } from '../test/helpers/main-process.js';
import { rssBytes, samplePeakRss, streamedPut } from '../test/storage/upload-client.js';

const MIB = 1024 * 1024;
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_MIB = 32;
const PASSWORD = 'bench-upload-password';

const dir = await mkdtemp(join(tmpdir(), 'streamcore-bench-upload-'));
const server = startMain(
  {
    CORE_ADDRESS: '127.0.0.1:0',
    CORE_DB_DIR: join(dir, 'db'),
    CORE_STORAGE_DISK_DIR: join(dir, 'data'),
    CORE_API_AUTH_ENABLE: 'true',
    CORE_API_AUTH_USERNAME: 'admin',
    CORE_API_AUTH_PASSWORD: PASSWORD,
    NODE_OPTIONS: readStartScript().flags.join(' '),
  },
  dir,
);
try {
  const url = await server.listening;
  const pid = server.child.pid ?? 0;
  const login = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}` };
  await streamedPut(`${url}/api/v3/fs/disk/warm.bin`, { totalBytes: 4 * MIB, headers });

  const rows: { idle: number; peak: number; seconds: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const readings: number[] = [];
    for (let i = 0; i < 5; i++) {
      readings.push(rssBytes(pid));
      await sleep(100);
    }
    const idle = median(readings);
    const sampler = samplePeakRss(pid);
    const started = performance.now();
    const answer = await streamedPut(`${url}/api/v3/fs/disk/big.bin`, {
      totalBytes: UPLOAD_MIB * MIB,
      headers,
    });
    const seconds = (performance.now() - started) / 1000;
    const peak = sampler.stop();
    if (answer.status !== 201 && answer.status !== 204) throw new Error(`upload answered ${answer.status}`);
    await fetch(`${url}/api/v3/fs/disk/big.bin`, { method: 'DELETE', headers });
    rows.push({ idle, peak, seconds });
  }

  const mib = (bytes: number): string => (bytes / MIB).toFixed(1);
  console.log(
    `| round | idle RSS (MiB) | peak RSS during ${UPLOAD_MIB} MiB upload (MiB) | rise (MiB) | upload (s) |`,
  );
  console.log('|---|---|---|---|---|');
  rows.forEach((row, index) =>
    console.log(
      `| ${index + 1} | ${mib(row.idle)} | ${mib(row.peak)} | ${mib(row.peak - row.idle)} | ${row.seconds.toFixed(1)} |`,
    ),
  );
  const rise = median(rows.map((row) => row.peak - row.idle));
  console.log(
    `| median | ${mib(median(rows.map((r) => r.idle)))} | ${mib(median(rows.map((r) => r.peak)))} | ${mib(rise)} | ${median(rows.map((r) => r.seconds)).toFixed(1)} |`,
  );
  console.log(`target: rise within ${TARGET_MIB} MiB: ${rise <= TARGET_MIB * MIB ? 'met' : 'NOT met'}`);
} finally {
  server.child.kill('SIGTERM');
  await server.exited;
  await rm(dir, { recursive: true, force: true });
}
