import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';
import { startServer } from '../helpers/server.js';
import { lavfiProcess, ok } from './support.js';

const PROCESSES = 6;
const BLOB = 'x'.repeat(1_000_000);

/** One API call against a child server (no TestServer there). */
async function send(url: string, method: string, path: string, body?: unknown): Promise<number> {
  const response = await fetch(`${url}/api/v3${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('db.journal: a change costs what it changes, not the whole db', () => {
  it(
    'appends small changes beside a large db.json, survives kill -9 and a torn line, and folds at start',
    {
      timeout: 120_000,
    },
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'streamcore-journal-'));
      const db = join(dir, 'db');
      try {
        const child = startMain(
          {
            CORE_ADDRESS: '127.0.0.1:0',
            CORE_DB_DIR: db,
            CORE_STORAGE_DISK_DIR: join(dir, 'data'),
            CORE_API_MAX_BODY_KBYTES: '2048',
            CORE_API_AUTH_ENABLE: 'false',
          },
          dir,
        );
        const url = await child.listening;
        for (let i = 0; i < PROCESSES; i++) {
          assert.equal(await send(url, 'POST', '/process', lavfiProcess(`p${i}`)), 200);
          assert.equal(await send(url, 'PUT', `/process/p${i}/metadata/blob`, BLOB), 200);
        }
        const large = await stat(join(db, 'db.json'));
        // Past the size below which every change rewrites the file (4 MiB).
        assert.ok(large.size > 4 * 1024 * 1024, `db.json holds ${large.size} bytes`);

        const journalBefore = (await stat(join(db, 'db.journal')).catch(() => undefined))?.size ?? 0;
        // Small changes of every kind: each is a line of the journal; db.json is not rewritten.
        const timings: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          assert.equal(await send(url, 'PUT', '/process/p0/metadata/note', `after ${i}`), 200);
          timings.push(performance.now() - started);
        }
        assert.equal(await send(url, 'PUT', '/metadata/sys', { saved: true }), 200);
        assert.equal(await send(url, 'DELETE', '/process/p5'), 200);
        assert.equal(await send(url, 'POST', '/process', lavfiProcess('late', { reference: 'r' })), 200);
        assert.equal(await send(url, 'PUT', '/process/p1/command', { command: 'stop' }), 200);
        const after = await stat(join(db, 'db.json'));
        assert.equal(after.mtimeMs, large.mtimeMs, 'db.json was not rewritten for a small change');
        const grown = (await stat(join(db, 'db.journal'))).size - journalBefore;
        assert.ok(grown > 0 && grown < 10_000, `the small changes took ${grown} bytes of journal`);
        console.log(
          `a metadata change beside a ${(large.size / 1e6).toFixed(1)} MB db.json: ${timings.map((ms) => ms.toFixed(1)).join(', ')} ms (journal +${grown} bytes)`,
        );

        child.child.kill('SIGKILL');
        await child.exited;
        // A line whose write a crash cut off: never acknowledged, so it must not count.
        await appendFile(join(db, 'db.journal'), '{"process":{"p0":null');

        const server = await startServer({
          dir,
          config: { db: { dir: db }, storage: { disk: { dir: join(dir, 'data') } } },
        });
        try {
          const ids = (await ok<{ id: string }[]>(server, 'GET', '/process')).map((p) => p.id).sort();
          assert.deepEqual(ids, ['late', 'p0', 'p1', 'p2', 'p3', 'p4']);
          assert.equal(await ok(server, 'GET', '/process/p0/metadata/note'), 'after 4');
          assert.equal((await ok<string>(server, 'GET', '/process/p3/metadata/blob')).length, BLOB.length);
          assert.deepEqual(await ok(server, 'GET', '/metadata/sys'), { saved: true });
          // Folded at start: db.json alone holds everything again (datarhei v16 reads it), journal empty.
          assert.equal((await stat(join(db, 'db.journal'))).size, 0);
          const file = JSON.parse(await readFile(join(db, 'db.json'), 'utf8')) as {
            version: number;
            process: Record<string, unknown>;
            metadata: { system: Record<string, unknown>; process: Record<string, Record<string, unknown>> };
          };
          assert.equal(file.version, 4);
          assert.deepEqual(Object.keys(file.process).sort(), ids);
          assert.equal(file.metadata.process.p0?.note, 'after 4');
          assert.deepEqual(file.metadata.system, { sys: { saved: true } });
        } finally {
          await server.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
