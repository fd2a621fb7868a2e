import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { readProcessConfig, type ProcessConfig } from '../../src/process/config/index.js';
import { parseDb, serializeDb } from '../../src/process/store/db.js';
import { ProcessEntry } from '../../src/process/store/stored-form.js';
import { startServer } from '../helpers/server.js';
import { ok } from './support.js';

/** A db.json written by streamcore before its stored form was derived from the contract. */
const WRITTEN_BEFORE = join(import.meta.dirname, '..', 'fixtures', 'process-store', 'streamcore-db-v4.json');

interface DbFile {
  process: Record<string, unknown>;
  metadata: { system: Record<string, unknown>; process: Record<string, unknown> };
}

function read(body: Record<string, unknown>): ProcessConfig {
  const { config, problems } = readProcessConfig(body);
  assert.deepEqual(problems, []);
  return config as ProcessConfig;
}

describe('db.json: the stored form derived from the process contract', () => {
  it('matches every process entry of a file written before, and writes that file again byte for byte', async () => {
    const text = await readFile(WRITTEN_BEFORE, 'utf8');
    const data = JSON.parse(text) as DbFile;
    const entries = Object.entries(data.process).filter(([, entry]) => typeof entry === 'object');
    assert.equal(entries.length, 2);
    for (const [id, entry] of entries) {
      assert.deepEqual([...Value.Errors(ProcessEntry, entry)], [], id);
      // The derived schema lists exactly the stored fields, in the order they are written.
      assert.deepEqual(Object.keys(entry as object), Object.keys(ProcessEntry.properties), id);
      const config = (entry as { config: object }).config;
      assert.deepEqual(Object.keys(config), Object.keys(ProcessEntry.properties.config.properties), id);
    }
    const content = parseDb(data);
    const records = content.processes.map((stored) => ({
      config: read(stored.body),
      createdAt: stored.createdAt,
      updatedAt: stored.updatedAt,
      order: stored.order,
      metadata: stored.metadata,
    }));
    assert.equal(serializeDb(records, content.system, content.unreadable), text);
  });

  it('loads that file in the real server, answers its configs, and writes the entries back unchanged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'streamcore-stored-form-'));
    try {
      await mkdir(join(dir, 'db'), { recursive: true });
      await copyFile(WRITTEN_BEFORE, join(dir, 'db', 'db.json'));
      const before = JSON.parse(await readFile(WRITTEN_BEFORE, 'utf8')) as DbFile;
      const server = await startServer({ dir });
      try {
        const config = await ok<ProcessConfig>(server, 'GET', '/process/hls-main/config');
        assert.deepEqual(config.limits, { cpu_usage: 12.5, memory_mbytes: 300, waitfor_seconds: 10 });
        assert.deepEqual(config.output[0]?.cleanup[0], {
          pattern: 'memfs:/hls-main_*.ts',
          max_files: 10,
          max_file_age_seconds: 60,
          purge_on_delete: true,
        });
        // A change to one process makes the server write the file.
        await ok(server, 'PUT', '/process/snapshot/metadata/touched', true);
      } finally {
        await server.close();
      }
      const after = JSON.parse(await readFile(join(dir, 'db', 'db.json'), 'utf8')) as DbFile;
      // Byte for byte, key order included, every process entry as it was.
      assert.equal(JSON.stringify(after.process), JSON.stringify(before.process));
      assert.deepEqual(after.metadata.system, before.metadata.system);
      assert.deepEqual(after.metadata.process.snapshot, { touched: true });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
