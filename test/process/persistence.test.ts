import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startMain } from '../helpers/main-process.js';
import { startServer } from '../helpers/server.js';
import { getState, isAlive, lavfiProcess, ok, waitFor, waitForState } from './support.js';

const DATARHEI_DB = join(import.meta.dirname, 'fixtures', 'datarhei-v16-db.json');

interface DbFile {
  version: number;
  process: Record<string, { id: string; order: string; created_at: number; config: Record<string, unknown> }>;
  metadata: { system: Record<string, unknown>; process: Record<string, Record<string, unknown>> };
}

async function readDb(dir: string): Promise<DbFile> {
  return JSON.parse(await readFile(join(dir, 'db', 'db.json'), 'utf8')) as DbFile;
}

describe('persistence in db.json', () => {
  it('writes every change atomically and restores the processes after a restart of the server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-db-'));
    try {
      const first = await startServer({ dir });
      await ok(
        first,
        'POST',
        '/process',
        lavfiProcess('keeps-running', { autostart: true, reference: 'r1' }),
      );
      await ok(first, 'POST', '/process', lavfiProcess('stays-stopped'));
      await ok(first, 'PUT', '/process/stays-stopped/metadata/ui', { title: 'Lobby' });
      let db = await readDb(dir);
      assert.equal(db.version, 4);
      assert.deepEqual(Object.keys(db.process).sort(), ['keeps-running', 'stays-stopped']);
      assert.equal(db.process['keeps-running']?.order, 'start');
      assert.equal(db.process['stays-stopped']?.order, 'stop');
      assert.deepEqual(db.metadata.process['stays-stopped'], { ui: { title: 'Lobby' } });
      const running = await waitForState(first, 'keeps-running', 'running', 15_000, 1);
      await first.close();
      assert.equal(isAlive(running.pid), false, 'shutdown stopped the child');
      db = await readDb(dir);
      assert.equal(db.process['keeps-running']?.order, 'start', 'shutdown keeps the orders');
      assert.equal(
        (await readdir(join(dir, 'db'))).filter((name) => name.endsWith('.tmp')).length,
        0,
        'no temporary files are left',
      );

      const second = await startServer({ dir });
      try {
        const restored = await waitForState(second, 'keeps-running', 'running', 15_000, 1);
        assert.equal(restored.order, 'start');
        const stopped = await getState(second, 'stays-stopped');
        assert.deepEqual([stopped.exec, stopped.order], ['finished', 'stop']);
        assert.deepEqual(await ok(second, 'GET', '/process/stays-stopped/metadata'), {
          ui: { title: 'Lobby' },
        });
        const config = await ok<{ reference: string }>(second, 'GET', '/process/keeps-running/config');
        assert.equal(config.reference, 'r1');
        await ok(second, 'DELETE', '/process/stays-stopped');
        assert.deepEqual(Object.keys((await readDb(dir)).process), ['keeps-running']);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('loads a db.json written by datarhei Core v16 (version 4)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-datarhei-'));
    await mkdir(join(dir, 'db'), { recursive: true });
    await copyFile(DATARHEI_DB, join(dir, 'db', 'db.json'));
    const server = await startServer({ dir });
    try {
      const ingest = 'restreamer-ui:ingest:4186b095-7f0a-4e94-8c3d-f17459ab252f';
      const snapshot = `${ingest}_snapshot`;
      const list = await ok<{ id: string; reference: string; created_at: number }[]>(
        server,
        'GET',
        '/process?filter=config',
      );
      assert.deepEqual(
        list.map((p) => p.id),
        [ingest, snapshot],
      );
      assert.equal(list[0]?.reference, '4186b095-7f0a-4e94-8c3d-f17459ab252f');
      assert.equal(list[0]?.created_at, 1663765432);
      const config = await ok<{
        limits: Record<string, number>;
        reconnect_delay_seconds: number;
        input: { address: string }[];
      }>(server, 'GET', `/process/${snapshot}/config`);
      assert.deepEqual(config.limits, { cpu_usage: 12.5, memory_mbytes: 256, waitfor_seconds: 10 });
      assert.equal(config.reconnect_delay_seconds, 60);
      assert.equal(config.input[0]?.address, `#${ingest}:output=output_0`);
      const metadata = await ok<{ 'restreamer-ui': { meta: { name: string } } }>(
        server,
        'GET',
        `/process/${ingest}/metadata`,
      );
      assert.equal(metadata['restreamer-ui'].meta.name, 'Livestream 1');
      // The process ordered to run runs, and writes its HLS into memfs.
      await waitForState(server, ingest, 'running', 15_000, 1);
      await waitFor(
        async () =>
          (await fetch(`${server.url}/memfs/4186b095-7f0a-4e94-8c3d-f17459ab252f.m3u8`)).status === 200,
        20_000,
        'the playlist of the restored process',
      );
      assert.equal((await getState(server, snapshot)).order, 'stop');
      // Written back in the same format, system metadata kept.
      await ok(server, 'PUT', `/process/${snapshot}/metadata/touched`, true);
      const db = await readDb(dir);
      assert.deepEqual(db.metadata.system, { 'restreamer-ui': { version: '1.4.0' } });
      assert.equal(db.process[snapshot]?.config.limit_memory_bytes, 268435456);
    } finally {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes entries it cannot use back exactly as found, through restarts and other changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-keep-'));
    // Valid in the store format, but its output lies outside the disk directory.
    const invalid = {
      id: 'outside',
      reference: 'keep-ref',
      config: {
        id: 'outside',
        reference: 'keep-ref',
        ffversion: '^5.1.2',
        input: [{ id: 'in', address: 'testsrc=size=32x24:rate=10', options: ['-f', 'lavfi'], cleanup: null }],
        output: [{ id: 'out', address: '/elsewhere/out.ts', options: ['-f', 'mpegts'], cleanup: [] }],
        options: ['-loglevel', 'info'],
        reconnect: true,
        reconnect_delay_seconds: 15,
        autostart: true,
        stale_timeout_seconds: 30,
        limit_cpu_usage: 0,
        limit_memory_bytes: 0,
        limit_waitfor_seconds: 5,
      },
      created_at: 1663765432,
      updated_at: 1663769999,
      order: 'start',
      future_field: { kept: true },
    };
    const invalidMetadata = { 'restreamer-ui': { meta: { name: 'Old camera' } } };
    const notAnObject = 'garbage';
    const original = {
      version: 4,
      process: { outside: invalid, broken: notAnObject },
      metadata: { system: {}, process: { outside: invalidMetadata } },
    };
    try {
      await mkdir(join(dir, 'db'), { recursive: true });
      await writeFile(join(dir, 'db', 'db.json'), JSON.stringify(original, null, 2));
      const first = await startServer({ dir });
      assert.deepEqual(await ok(first, 'GET', '/process'), [], 'neither entry is loaded');
      await ok(first, 'POST', '/process', lavfiProcess('other'));
      await first.close();
      const second = await startServer({ dir });
      try {
        await ok(second, 'PUT', '/process/other/metadata/note', 'changed');
        const text = await readFile(join(dir, 'db', 'db.json'), 'utf8');
        const db = JSON.parse(text) as DbFile & { process: Record<string, unknown> };
        assert.deepEqual(db.process.outside, invalid);
        assert.equal(
          JSON.stringify(db.process.outside),
          JSON.stringify(invalid),
          'same keys in the same order',
        );
        assert.equal(db.process.broken, notAnObject);
        assert.deepEqual(db.metadata.process.outside, invalidMetadata);
        assert.deepEqual(db.metadata.process.other, { note: 'changed' });
        assert.ok(
          text.includes(JSON.stringify(invalid, null, 2).replaceAll('\n', '\n    ')),
          'the same text',
        );
        // A new process with that id replaces the kept entry for good, metadata included.
        await ok(second, 'POST', '/process', lavfiProcess('outside'));
        await ok(second, 'DELETE', '/process/outside');
        const after = await readDb(dir);
        assert.equal(after.process.outside, undefined);
        assert.equal(after.metadata.process.outside, undefined);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start on a db.json it cannot read, rather than overwrite it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-baddb-'));
    try {
      await mkdir(join(dir, 'db'), { recursive: true });
      await writeFile(join(dir, 'db', 'db.json'), '{"version": 4, "process": {');
      await assert.rejects(startServer({ dir }), /db\.json: not valid JSON/);
      await writeFile(join(dir, 'db', 'db.json'), '{"version": 3, "process": {}}');
      await assert.rejects(startServer({ dir }), /unsupported version 3/);
      assert.equal(await readFile(join(dir, 'db', 'db.json'), 'utf8'), '{"version": 3, "process": {}}');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('purges purge_on_delete files at shutdown and writes the state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-purge-'));
    try {
      const server = await startServer({ dir });
      await ok(
        server,
        'POST',
        '/process',
        lavfiProcess('purged', {
          output: [
            {
              id: 'seg',
              address: '{diskfs}/purged_%03d.ts',
              options: [
                '-c:v',
                'libx264',
                '-preset',
                'ultrafast',
                '-g',
                '5',
                '-f',
                'segment',
                '-segment_time',
                '1',
              ],
              cleanup: [{ pattern: 'disk:/purged_*.ts', purge_on_delete: true }],
            },
          ],
          autostart: true,
        }),
      );
      await waitFor(
        async () => (await readdir(join(dir, 'data'))).some((name) => name.startsWith('purged_')),
        15_000,
        'a segment on disk',
      );
      await server.close();
      assert.deepEqual(
        (await readdir(join(dir, 'data'))).filter((name) => name.startsWith('purged_')),
        [],
      );
      assert.equal((await readDb(dir)).process.purged?.order, 'start');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('graceful shutdown of the real server process', () => {
  it('stops the encoders, writes db.json and exits 0 on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-process-main-'));
    try {
      const configFile = join(dir, 'config.json');
      await writeFile(
        configFile,
        JSON.stringify({
          address: '127.0.0.1:0',
          db: { dir: join(dir, 'db') },
          storage: { disk: { dir: join(dir, 'data') } },
        }),
      );
      const main = startMain({ CORE_CONFIGFILE: configFile }, dir);
      const url = await main.listening;
      const server = { url, dir } as Parameters<typeof ok>[0];
      await ok(server, 'POST', '/process', lavfiProcess('main-proc', { autostart: true }));
      const running = await waitForState(server, 'main-proc', 'running', 15_000, 1);
      main.child.kill('SIGTERM');
      const exit = await main.exited;
      assert.equal(exit.code, 0, exit.stderr);
      assert.equal(isAlive(running.pid), false, 'the encoder was stopped');
      const db = await readDb(dir);
      assert.equal(db.process['main-proc']?.order, 'start');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
