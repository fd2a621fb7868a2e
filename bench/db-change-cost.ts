/**
 * What one change costs to persist beside a large db (issue 24 item 11): 40 processes with
 * 1 MiB of metadata each (42 MB of db.json in the measurement), then small metadata
 * changes, one at a time and 20 at once.
 *
 * Method: the real server in this process on loopback (answers not checked against the API
 * description, which would be what is measured), `api.max_body_kbytes` raised so that 1 MiB goes
 * in one request. Sequential: 3 warm-up changes, then the median of 15. Concurrent: 20 changes of
 * 20 processes sent at once, the time until the last answer, median of 3 rounds.
 *
 * Run: node --import tsx bench/db-change-cost.ts
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { median } from './measure.js';
import { startServer } from '../test/helpers/server.js';

const PROCESSES = 40;
const BLOB = 'x'.repeat(1024 * 1024 - 64);

const server = await startServer({
  checkAnswers: false,
  config: { api: { max_body_kbytes: 2048, limits: { max_metadata_bytes: 64 * 1024 * 1024 } } },
});
const call = async (method: string, path: string, body?: unknown): Promise<void> => {
  const response = await fetch(`${server.url}/api/v3${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
};
try {
  for (let i = 0; i < PROCESSES; i++) {
    await call('POST', '/process', {
      id: `p${i}`,
      input: [{ id: 'in', address: 'testsrc', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      autostart: false,
    });
    await call('PUT', `/process/p${i}/metadata/blob`, BLOB);
  }
  const sequential: number[] = [];
  for (let i = 0; i < 18; i++) {
    const started = performance.now();
    await call('PUT', '/process/p0/metadata/note', `change ${i}`);
    if (i >= 3) sequential.push(performance.now() - started);
  }
  const concurrent: number[] = [];
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PUT', `/process/p${i}/metadata/note`, `round ${round}`)),
    );
    concurrent.push(performance.now() - started);
  }
  const dir = join(server.dir, 'db');
  const size = async (name: string): Promise<number> =>
    (await stat(join(dir, name)).catch(() => undefined))?.size ?? 0;
  console.log(
    `| db.json (MB) | db.journal (MB) | one change (ms, median of 15) | 20 at once (ms, median of 3) |`,
  );
  console.log('|---|---|---|---|');
  console.log(
    `| ${((await size('db.json')) / 1e6).toFixed(1)} | ${((await size('db.journal')) / 1e6).toFixed(1)} | ${median(sequential).toFixed(1)} | ${median(concurrent).toFixed(0)} |`,
  );
} finally {
  await server.close();
}
